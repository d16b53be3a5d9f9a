import { defineJob, type JobEvent } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { expect } from "chai";
import { PostgresJobEvents } from "../../src";
import { jobEventChannel } from "../../src/events/job-event-channel";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { RawListener } from "../support/raw-listener";

const Requeued = defineJob<{ n: number }>("requeued");
const Sentinel = defineJob<{ n: number }>("sentinel");

/** What a test compares of an event: everything but `at`. */
type Seen = Omit<JobEvent, "at"> & { readonly reason?: string; readonly errorCode?: string };

describe("job events of a job sent back to waiting", () => {
  let test: TestSchema;
  let events: PostgresJobEvents;
  let seen: JobEvent[];

  beforeEach(async () => {
    test = await createTestSchema();
    events = new PostgresJobEvents({ connectionString: test.connectionString, schema: test.schema, reconnectMinDelayMs: 20 });
    seen = [];
  });
  afterEach(async () => {
    await events.close();
    await test.drop();
  });

  async function subscribe(): Promise<void> {
    await events.subscribe({ queues: ["requeued", "sentinel"] }, { onEvent: (event) => void seen.push(event) });
  }

  /** Events of queue `requeued` caused by `work`: an enqueue on `sentinel` after it is heard last, since notifications arrive in commit order. */
  async function eventsOf(work: () => Promise<unknown>): Promise<Seen[]> {
    seen = [];
    await work();
    const { id } = await test.store.enqueue(buildNewJob(Sentinel, { n: 0 }));
    await eventually(() => seen.some((event) => event.jobId === id), { timeoutMs: 10_000, what: "the sentinel's event" });
    return seen
      .filter((event) => event.queue === "requeued")
      .map(({ at, ...rest }) => {
        expect(at).to.be.instanceOf(Date);
        return rest;
      });
  }

  async function claimed(count: number): Promise<{ id: string; attempt: number }[]> {
    await test.store.enqueueMany(Array.from({ length: count }, (_, n) => buildNewJob(Requeued, { n })));
    const jobs = await test.store.claimBatch({ queue: "requeued", workerId: "w1", limit: count, leaseMs: 60_000 });
    return jobs.map((job) => ({ id: job.id, attempt: job.attempt }));
  }

  async function dead(count: number): Promise<string[]> {
    const jobs = await claimed(count);
    await test.store.markJobsDead({ workerId: "w1", jobs: jobs.map((job) => ({ ...job, failure: { message: "Error: no", code: "NO" } })) });
    return jobs.map((job) => job.id);
  }

  it("sends requeued (reason retry) for retryJob of a dead job, and nothing for a job it cannot retry", async () => {
    const [id] = await dead(1);
    await subscribe();
    expect(
      await eventsOf(async () => {
        expect(await test.store.retryJob({ id: id! })).to.equal(true);
        expect(await test.store.retryJob({ id: id! }), "already queued").to.equal(false);
      }),
    ).to.deep.equal([{ type: "requeued", jobId: id, queue: "requeued", attempt: 1, reason: "retry" }]);
  });

  it("sends requeued (reason retry) for each job retryDeadJobs queues", async () => {
    const ids = await dead(3);
    await subscribe();
    const sent = await eventsOf(async () => expect(await test.store.retryDeadJobs({ queue: "requeued", limit: 10 })).to.equal(3));
    expect(sent.map((event) => event.jobId).sort()).to.deep.equal([...ids].sort());
    expect(sent.every((event) => event.type === "requeued" && event.reason === "retry" && event.queue === "requeued" && event.attempt === 1)).to.equal(true);
  });

  it("sends requeued (reason retry) for retryJob of a failed job waiting for its retry, which stays in place", async () => {
    const [job] = await claimed(1);
    await test.store.scheduleRetries({
      workerId: "w1",
      jobs: [{ ...job!, delayMs: 3_600_000, failure: { message: "Error: flaky", code: "FLAKY" }, spendAttempt: true }],
    });
    await subscribe();
    expect(await eventsOf(async () => expect(await test.store.retryJob({ id: job!.id })).to.equal(true))).to.deep.equal([
      { type: "requeued", jobId: job!.id, queue: "requeued", attempt: 1, reason: "retry" },
    ]);
  });

  it("sends requeued (reason run-now) for runJobNow of a waiting job, and nothing for a running one", async () => {
    const [running] = await claimed(1);
    const { id } = await test.store.enqueue(buildNewJob(Requeued, { n: 9 }, { delayMs: 3_600_000 }));
    await subscribe();
    expect(
      await eventsOf(async () => {
        expect(await test.store.runJobNow({ id })).to.equal(true);
        expect(await test.store.runJobNow({ id: running!.id })).to.equal(false);
      }),
    ).to.deep.equal([{ type: "requeued", jobId: id, queue: "requeued", attempt: 0, reason: "run-now" }]);
  });

  it("sends requeued with reason snooze or release for a scheduled retry without a failure, and only failed for one with a failure", async () => {
    const [snoozed, released, given, failed] = await claimed(4);
    await subscribe();
    const sent = await eventsOf(() =>
      test.store.scheduleRetries({
        workerId: "w1",
        jobs: [
          { ...snoozed!, delayMs: 60_000, failure: null, spendAttempt: false, outcome: "snoozed" },
          { ...released!, delayMs: 0, failure: null, spendAttempt: false, outcome: "shutdown" },
          { ...given!, delayMs: 0, failure: null, spendAttempt: false, outcome: null },
          { ...failed!, delayMs: 60_000, failure: { message: "Error: flaky", code: "FLAKY" }, spendAttempt: true },
        ],
      }),
    );
    const byId = (id: string): Seen[] => sent.filter((event) => event.jobId === id);
    expect(byId(snoozed!.id)).to.deep.equal([{ type: "requeued", jobId: snoozed!.id, queue: "requeued", attempt: 1, reason: "snooze" }]);
    expect(byId(released!.id)).to.deep.equal([{ type: "requeued", jobId: released!.id, queue: "requeued", attempt: 1, reason: "release" }]);
    expect(byId(given!.id)).to.deep.equal([{ type: "requeued", jobId: given!.id, queue: "requeued", attempt: 1, reason: "release" }]);
    expect(byId(failed!.id)).to.deep.equal([{ type: "failed", jobId: failed!.id, queue: "requeued", attempt: 1, errorCode: "FLAKY" }]);
  });

  it("sends only what a subscription's types ask for: requeued alone leaves out the failures of the same statement", async () => {
    const [snoozed, failed] = await claimed(2);
    const only: JobEvent[] = [];
    await events.subscribe({ types: ["requeued"] }, { onEvent: (event) => void only.push(event) });
    await subscribe();
    await eventsOf(() =>
      test.store.scheduleRetries({
        workerId: "w1",
        jobs: [
          { ...snoozed!, delayMs: 60_000, failure: null, spendAttempt: false, outcome: "snoozed" },
          { ...failed!, delayMs: 60_000, failure: { message: "Error: flaky", code: "FLAKY" }, spendAttempt: true },
        ],
      }),
    );
    expect(only.map((event) => [event.type, event.jobId])).to.deep.equal([["requeued", snoozed!.id]]);
  });

  it("sends no notification for a retry, a run-now, a snooze or a release while nobody subscribes", async () => {
    const raw = await RawListener.open(test.connectionString, jobEventChannel(test.schema));
    try {
      const heard = await raw.heardAfter(test.db, async () => {
        const [deadId] = await dead(1);
        const [snoozed, released] = await claimed(2);
        const { id: later } = await test.store.enqueue(buildNewJob(Requeued, { n: 9 }, { delayMs: 3_600_000 }));
        expect(await test.store.retryJob({ id: deadId! })).to.equal(true);
        expect(await test.store.runJobNow({ id: later })).to.equal(true);
        await test.store.scheduleRetries({
          workerId: "w1",
          jobs: [
            { ...snoozed!, delayMs: 60_000, failure: null, spendAttempt: false, outcome: "snoozed" },
            { ...released!, delayMs: 0, failure: null, spendAttempt: false, outcome: "shutdown" },
          ],
        });
        await dead(2);
        expect(await test.store.retryDeadJobs({ queue: "requeued", limit: 10 })).to.equal(2);
      });
      expect(heard).to.deep.equal([]);
    } finally {
      await raw.close();
    }
  });
});
