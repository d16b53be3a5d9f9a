import { ErrorCode } from "@stint/core";
import { expect } from "chai";
import { claimAndAbandon, claimOne, newJob, rejectionOf, waitForLeaseExpiry, type ConformanceContext } from "./conformance-harness";

/** rescueExpiredLeases, cancelJob, retryJob, getJob and countByQueue. */
export function describeOperationsConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  describe("rescueExpiredLeases", () => {
    it("retries expired jobs with attempts left and kills the others, leaving live leases alone", async () => {
      const queue = ctx.freshQueue();
      const retried = await ctx.store().enqueue(newJob(queue, { n: 1 }, { maxAttempts: 2, priority: 3 }));
      const dead = await ctx.store().enqueue(newJob(queue, { n: 2 }, { maxAttempts: 1, priority: 2 }));
      const live = await ctx.store().enqueue(newJob(queue, { n: 3 }, { maxAttempts: 1, priority: 1 }));
      const expiring = await ctx.store().claimBatch({ queue, workerId: "gone", limit: 2, leaseMs: 1 });
      expect(expiring.map((job) => job.id)).to.deep.equal([retried.id, dead.id]);
      await claimOne(ctx.store(), queue, "alive");
      await waitForLeaseExpiry(ctx.harness(), [retried.id, dead.id]);

      expect(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 100 })).to.deep.equal({ retried: 1, dead: 1 });
      expect(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 100 })).to.deep.equal({ retried: 0, dead: 0 });

      expect(await ctx.store().getJob({ id: retried.id })).to.include({ state: "failed", attempts: 1, lockedUntil: null });
      const deadJob = await ctx.store().getJob({ id: dead.id });
      expect(deadJob).to.include({ state: "dead", errorCode: ErrorCode.WorkerDied });
      expect(deadJob?.lastError).to.match(/stopped.*attempt 1\b/s);
      expect(await ctx.store().getJob({ id: live.id })).to.include({ state: "running", lockedBy: "alive" });
      const [again] = await ctx.store().claimBatch({ queue, workerId: "next", limit: 5, leaseMs: 60_000 });
      expect(again).to.include({ id: retried.id, attempt: 2 });
    });

    it("rescues at most limit jobs per call and only in the given queues", async () => {
      const queue = ctx.freshQueue();
      const untouched = ctx.freshQueue();
      await ctx.store().enqueueMany([1, 2, 3].map((n) => newJob(queue, { n })));
      await ctx.store().enqueue(newJob(untouched, {}));
      const claimed = await ctx.store().claimBatch({ queue, workerId: "gone", limit: 3, leaseMs: 1 });
      const other = await claimAndAbandon(ctx.harness(), untouched, "gone");
      await waitForLeaseExpiry(ctx.harness(), claimed.map((job) => job.id));

      expect(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 2 })).to.deep.equal({ retried: 2, dead: 0 });
      expect(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 2 })).to.deep.equal({ retried: 1, dead: 0 });
      expect((await ctx.store().getJob({ id: other.id }))?.state).to.equal("running");
    });
  });

  describe("cancelJob", () => {
    it("cancels a queued job once", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      expect(await ctx.store().cancelJob({ id })).to.equal(true);
      const job = await ctx.store().getJob({ id });
      expect(job?.state).to.equal("cancelled");
      expect(job?.finishedAt).to.be.instanceOf(Date);
      expect(await ctx.store().cancelJob({ id })).to.equal(false);
      expect(await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 })).to.deep.equal([]);
    });

    it("cancels a running job so that its worker's outcome is refused", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      expect(await ctx.store().cancelJob({ id: job.id })).to.equal(true);
      expect(await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...job, resultJson: null, durationMs: 1 }] })).to.deep.equal([]);
      expect((await ctx.store().getJob({ id: job.id }))?.state).to.equal("cancelled");
    });

    it("refuses to cancel a finished or unknown job", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...job, resultJson: null, durationMs: 1 }] });
      expect(await ctx.store().cancelJob({ id: job.id })).to.equal(false);
      expect(await ctx.store().cancelJob({ id: "999999999999" })).to.equal(false);
      expect(await ctx.store().cancelJob({ id: "not-an-id" })).to.equal(false);
    });
  });

  describe("retryJob", () => {
    it("queues a dead job again now with a fresh attempt budget", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 3, runAt: new Date(Date.now() - 60_000) }));
      const job = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: { message: "nope", code: "STINT_PERMANENT" } }] });
      expect(await ctx.store().retryJob({ id })).to.equal(true);
      const record = await ctx.store().getJob({ id });
      expect(record).to.include({ state: "queued", attempts: 1, maxAttempts: 4, lockedUntil: null, finishedAt: null });
      const [again] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 });
      expect(again).to.include({ id, attempt: 2, maxAttempts: 4 });
    });

    it("queues a cancelled job again", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      await ctx.store().cancelJob({ id });
      expect(await ctx.store().retryJob({ id })).to.equal(true);
      expect((await ctx.store().getJob({ id }))?.state).to.equal("queued");
    });

    it("refuses a job that is queued, running, succeeded or unknown", async () => {
      const queue = ctx.freshQueue();
      const queued = await ctx.store().enqueue(newJob(queue, { n: 1 }, { priority: -1 }));
      const running = await ctx.store().enqueue(newJob(queue, { n: 2 }, { priority: 1 }));
      const job = await claimOne(ctx.store(), queue, "w");
      expect(job.id).to.equal(running.id);
      expect(await ctx.store().retryJob({ id: queued.id })).to.equal(false);
      expect(await ctx.store().retryJob({ id: running.id })).to.equal(false);
      await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...job, resultJson: null, durationMs: 1 }] });
      expect(await ctx.store().retryJob({ id: running.id })).to.equal(false);
      expect(await ctx.store().retryJob({ id: "999999999999" })).to.equal(false);
    });

    it("refuses, naming the holder, when another active job now holds the dedupe key", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { dedupeKey: "k" }));
      const job = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: { message: "dead", code: null } }] });
      const holder = await ctx.store().enqueue(newJob(queue, {}, { dedupeKey: "k" }));
      expect(holder.duplicate).to.equal(false);
      const error = await rejectionOf(ctx.store().retryJob({ id }));
      expect(error.message).to.contain(holder.id).and.to.contain("dedupe key");
      expect((await ctx.store().getJob({ id }))?.state).to.equal("dead");
    });
  });

  describe("getJob", () => {
    it("returns undefined for an unknown or malformed id", async () => {
      expect(await ctx.store().getJob({ id: "999999999999" })).to.equal(undefined);
      expect(await ctx.store().getJob({ id: "abc" })).to.equal(undefined);
      expect(await ctx.store().getJob({ id: "99999999999999999999999" })).to.equal(undefined);
    });
  });

  describe("countByQueue", () => {
    it("counts every state, the due jobs and the age of the oldest due one", async () => {
      const queue = ctx.freshQueue();
      const old = new Date(Date.now() - 120_000);
      const enqueued = await ctx.store().enqueueMany([
        newJob(queue, { n: "succeeds" }, { priority: 9, runAt: old }),
        newJob(queue, { n: "dies" }, { priority: 8, runAt: old }),
        newJob(queue, { n: "retries" }, { priority: 7, runAt: old }),
        newJob(queue, { n: "runs" }, { priority: 6, runAt: old }),
        newJob(queue, { n: "due-oldest" }, { runAt: old }),
        newJob(queue, { n: "due" }),
        newJob(queue, { n: "later" }, { delayMs: 3_600_000 }),
        newJob(queue, { n: "cancelled" }),
      ]);
      const [succeeds, dies, retries, runs] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 4, leaseMs: 60_000 });
      expect((runs!.payload as { n: string }).n).to.equal("runs");
      await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...succeeds!, resultJson: null, durationMs: 1 }] });
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...dies!, failure: { message: "x", code: null } }] });
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...retries!, delayMs: 0, failure: { message: "again", code: null }, spendAttempt: true }] });
      expect(await ctx.store().cancelJob({ id: enqueued[7]!.id })).to.equal(true);
      const counts = await ctx.store().countByQueue({ queues: [queue] });
      expect(counts).to.have.length(1);
      const [row] = counts;
      expect(row?.queue).to.equal(queue);
      expect(row?.counts).to.deep.equal({ queued: 3, running: 1, failed: 1, succeeded: 1, dead: 1, cancelled: 1 });
      expect(row?.due).to.equal(3);
      expect(row?.oldestDueAgeMs).to.be.within(119_000, 180_000);
      expect(row).to.not.have.property("completedSince");
    });

    it("counts the jobs that succeeded within a window when asked", async () => {
      const queue = ctx.freshQueue();
      const idle = ctx.freshQueue();
      await ctx.store().enqueueMany([newJob(queue, {}), newJob(queue, {}), newJob(queue, {})]);
      const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      await ctx.store().completeJobs({ workerId: "w", jobs: claimed.slice(0, 2).map((job) => ({ ...job, resultJson: null, durationMs: 1 })) });
      const counts = await ctx.store().countByQueue({ queues: [queue, idle], completedSinceMs: 300_000 });
      const byQueue = new Map(counts.map((row) => [row.queue, row]));
      expect(byQueue.get(queue)?.completedSince).to.equal(2);
      expect(byQueue.get(idle)?.completedSince).to.equal(0);
      const [none] = await ctx.store().countByQueue({ queues: [queue], completedSinceMs: 0 });
      expect(none?.completedSince).to.equal(0);
    });

    it("reports the requested queues, with zeros for a queue without jobs", async () => {
      const busy = ctx.freshQueue();
      const idle = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(busy, {}));
      await ctx.store().cancelJob({ id });
      const counts = await ctx.store().countByQueue({ queues: [idle, busy] });
      expect(counts.map((row) => row.queue)).to.deep.equal([busy, idle].sort());
      const byQueue = new Map(counts.map((row) => [row.queue, row]));
      expect(byQueue.get(busy)?.counts.cancelled).to.equal(1);
      expect(byQueue.get(idle)).to.deep.equal({
        queue: idle,
        counts: { queued: 0, running: 0, failed: 0, succeeded: 0, dead: 0, cancelled: 0 },
        due: 0,
        oldestDueAgeMs: null,
      });
      const all = await ctx.store().countByQueue();
      expect(all.map((row) => row.queue)).to.include(busy).and.not.include(idle);
    });
  });
}
