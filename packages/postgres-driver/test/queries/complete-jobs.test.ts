import { expect } from "chai";
import { newJob } from "@stint/core/testing";
import { createTestSchema, type TestSchema } from "../../src/testing";

describe("completeJobs on PostgreSQL", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema();
  });
  afterEach(async () => {
    await test.drop();
  });

  it("completes a thousand attempts in one statement, each with its own result and duration, and answers the ids that applied", async () => {
    await test.store.enqueueMany(Array.from({ length: 1_000 }, (_, n) => newJob("batch", { n })));
    const claimed = await test.store.claimBatch({ queue: "batch", workerId: "w", limit: 1_000, leaseMs: 60_000 });
    expect(claimed).to.have.length(1_000);
    const [withObject, withText, withNull, longest, stale, ...rest] = claimed;
    const applied = await test.store.completeJobs({
      workerId: "w",
      jobs: [
        { id: withObject!.id, attempt: withObject!.attempt, resultJson: '{"sent":[1,2]}', durationMs: 41 },
        { id: withText!.id, attempt: withText!.attempt, resultJson: '"a,b"', durationMs: 7 },
        { id: withNull!.id, attempt: withNull!.attempt, resultJson: "null", durationMs: 0 },
        { id: longest!.id, attempt: longest!.attempt, resultJson: null, durationMs: 2_147_483_647 },
        // Another attempt than the one held: the fence refuses it.
        { id: stale!.id, attempt: stale!.attempt + 1, resultJson: null, durationMs: 1 },
        ...rest.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: null, durationMs: 3 })),
      ],
    });
    expect([...applied].sort()).to.deep.equal(
      claimed
        .filter((job) => job !== stale)
        .map((job) => job.id)
        .sort(),
    );
    const read = (id: string) => test.store.getJob({ id });
    expect(await read(withObject!.id)).to.deep.include({ state: "succeeded", result: { sent: [1, 2] }, durationMs: 41 });
    expect(await read(withText!.id)).to.deep.include({ state: "succeeded", result: "a,b", durationMs: 7 });
    expect(await read(withNull!.id)).to.deep.include({ state: "succeeded", result: null, durationMs: 0 });
    expect(await read(longest!.id)).to.deep.include({ state: "succeeded", result: null, durationMs: 2_147_483_647 });
    expect(await read(rest[500]!.id)).to.deep.include({ state: "succeeded", result: null, durationMs: 3 });
    expect(await read(stale!.id)).to.include({ state: "running", lockedBy: "w" });
    const [history] = await test.store.listAttempts({ jobId: rest[0]!.id });
    expect(history).to.include({ attempt: 1, outcome: "succeeded", durationMs: 3 });
  });

  it("answers no ids when no attempt applied", async () => {
    await test.store.enqueue(newJob("batch", { n: 1 }));
    const [job] = await test.store.claimBatch({ queue: "batch", workerId: "w", limit: 1, leaseMs: 60_000 });
    expect(await test.store.completeJobs({ workerId: "other", jobs: [{ id: job!.id, attempt: job!.attempt, resultJson: null, durationMs: 1 }] })).to.deep.equal(
      [],
    );
  });
});
