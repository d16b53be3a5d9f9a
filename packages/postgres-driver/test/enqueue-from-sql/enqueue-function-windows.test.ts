import { defineJob, ErrorCode, JobClient } from "@stint/core";
import { expect } from "chai";
import pg from "pg";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { sqlEnqueue, type SqlEnqueueOptions } from "./sql-enqueue";

const Digest = defineJob<{ readonly n: number }>("digest");

describe("the enqueue SQL function's unique windows, deadlines and follow-up runs", () => {
  let test: TestSchema;
  let callers: pg.Client[];

  beforeEach(async () => {
    test = await createTestSchema({ maxConnections: 4 });
    callers = Array.from({ length: 16 }, () => new pg.Client({ connectionString: test.connectionString }));
    await Promise.all(callers.map((caller) => caller.connect()));
  });
  afterEach(async () => {
    await Promise.all(callers.map((caller) => caller.end()));
    await test.drop();
  });

  /** Every caller enqueues at once, on its own connection; every call must succeed. */
  async function storm(options: (n: number) => SqlEnqueueOptions): Promise<string[]> {
    const outcomes = await Promise.all(callers.map((caller, n) => sqlEnqueue(caller, test.schema, Digest.name, { n }, options(n))));
    expect(outcomes.map((outcome) => outcome.refused?.message)).to.deep.equal(callers.map(() => undefined));
    return outcomes.map((outcome) => outcome.id!);
  }

  it("gives 16 concurrent callers of one unique window one job, which the library's enqueue finds too, finished or not", async () => {
    const ids = await storm(() => ({ unique_key: "digest:7", unique_for: "1 hour" }));
    expect(new Set(ids).size).to.equal(1);
    const [claimed] = await test.store.claimBatch({ queue: Digest.name, workerId: "w", limit: 10, leaseMs: 60_000 });
    await test.store.completeJobs({ workerId: "w", jobs: [{ ...claimed!, resultJson: null, durationMs: 1 }] });
    expect(await new JobClient(test.store).enqueue(Digest, { n: 99 }, { unique: { key: "digest:7", forMs: 3_600_000 } })).to.deep.equal({
      id: ids[0],
      duplicate: true,
    });
    const again = await sqlEnqueue(callers[0]!, test.schema, Digest.name, { n: 100 }, { unique_key: "digest:7", unique_for: "1 hour" });
    expect(again.id, "the finished job holds the window").to.equal(ids[0]);
  });

  it("stores the deadline from start_by, or expire_in after the run time; the claim skips a passed one and the sweep cancels it", async () => {
    const fixed = await sqlEnqueue(callers[0]!, test.schema, Digest.name, { n: 1 }, { start_by: "2031-01-01T00:00:00Z" });
    expect((await test.store.getJob({ id: fixed.id! }))?.startBy?.toISOString()).to.equal("2031-01-01T00:00:00.000Z");
    const delayed = await sqlEnqueue(callers[0]!, test.schema, Digest.name, { n: 2 }, { delay: "1 hour", expire_in: "5 minutes" });
    const record = (await test.store.getJob({ id: delayed.id! }))!;
    expect(record.startBy!.getTime() - record.runAt.getTime()).to.equal(300_000);
    const passed = await sqlEnqueue(callers[0]!, test.schema, Digest.name, { n: 3 }, { start_by: "2001-01-01T00:00:00Z" });
    const claimed = await test.store.claimBatch({ queue: Digest.name, workerId: "w", limit: 10, leaseMs: 60_000 });
    expect(claimed.map((job) => job.id)).to.deep.equal([fixed.id]);
    expect(await test.store.cancelExpiredJobs({ limit: 100 })).to.equal(1);
    expect(await test.store.getJob({ id: passed.id! })).to.deep.include({ state: "cancelled", errorCode: ErrorCode.Expired, startedAt: null });
  });

  for (const dedupe of ["replace", "debounce"]) {
    it(`${dedupe}: 16 concurrent callers while the holder runs schedule exactly one follow-up`, async () => {
      const holder = await sqlEnqueue(callers[0]!, test.schema, Digest.name, { n: -1 }, { dedupe_key: "doc:1" });
      await test.store.claimBatch({ queue: Digest.name, workerId: "w", limit: 1, leaseMs: 60_000 });
      const ids = await storm(() => ({ dedupe_key: "doc:1", dedupe, delay: "1 minute" }));
      expect(new Set(ids).size).to.equal(1);
      expect(ids[0]).to.not.equal(holder.id);
      const active = await test.store.listJobs({ queue: Digest.name, states: ["queued", "running", "failed"], limit: 100 });
      expect(active.map((job) => [job.id, job.state, job.dedupeKey]).sort()).to.deep.equal(
        [
          [holder.id, "running", null],
          [ids[0], "queued", "doc:1"],
        ].sort(),
      );
    });
  }
});
