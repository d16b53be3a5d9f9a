import assert from "node:assert/strict";
import { assertFields, assertWithin, assertContains, assertLacks } from "./conformance-assertions";
import { suite, testCase } from "./test-runner";
import { ErrorCode } from "../../errors/error-codes";
import { claimAndAbandon, claimOne, newJob, rejectionOf, waitForLeaseExpiry, type ConformanceContext } from "./conformance-harness";

/** rescueExpiredLeases, cancelJob, cancelJobs, runJobNow, retryJob, getJob and countByQueue. */
export function describeOperationsConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("rescueExpiredLeases", () => {
    testCase("retries expired jobs with attempts left and kills the others, leaving live leases alone", async () => {
      const queue = ctx.freshQueue();
      const retried = await ctx.store().enqueue(newJob(queue, { n: 1 }, { maxAttempts: 2, priority: 3 }));
      const dead = await ctx.store().enqueue(newJob(queue, { n: 2 }, { maxAttempts: 1, priority: 2 }));
      const live = await ctx.store().enqueue(newJob(queue, { n: 3 }, { maxAttempts: 1, priority: 1 }));
      const expiring = await ctx.store().claimBatch({ queue, workerId: "gone", limit: 2, leaseMs: 1 });
      assert.deepStrictEqual(
        expiring.map((job) => job.id),
        [retried.id, dead.id],
      );
      await claimOne(ctx.store(), queue, "alive");
      await waitForLeaseExpiry(ctx.harness(), [retried.id, dead.id]);

      assert.deepStrictEqual(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 100 }), { retried: 1, dead: 1 });
      assert.deepStrictEqual(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 100 }), { retried: 0, dead: 0 });

      assertFields(await ctx.store().getJob({ id: retried.id }), { state: "failed", attempts: 1, lockedUntil: null });
      const deadJob = await ctx.store().getJob({ id: dead.id });
      assertFields(deadJob, { state: "dead", errorCode: ErrorCode.WorkerDied });
      assert.match(deadJob?.lastError ?? "", /stopped.*attempt 1\b/s);
      assertFields(await ctx.store().getJob({ id: live.id }), { state: "running", lockedBy: "alive" });
      const [again] = await ctx.store().claimBatch({ queue, workerId: "next", limit: 5, leaseMs: 60_000 });
      assertFields(again, { id: retried.id, attempt: 2 });
    });

    testCase("rescues at most limit jobs per call and only in the given queues", async () => {
      const queue = ctx.freshQueue();
      const untouched = ctx.freshQueue();
      await ctx.store().enqueueMany([1, 2, 3].map((n) => newJob(queue, { n })));
      await ctx.store().enqueue(newJob(untouched, {}));
      const claimed = await ctx.store().claimBatch({ queue, workerId: "gone", limit: 3, leaseMs: 1 });
      const other = await claimAndAbandon(ctx.harness(), untouched, "gone");
      await waitForLeaseExpiry(
        ctx.harness(),
        claimed.map((job) => job.id),
      );

      assert.deepStrictEqual(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 2 }), { retried: 2, dead: 0 });
      assert.deepStrictEqual(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 2 }), { retried: 1, dead: 0 });
      assert.equal((await ctx.store().getJob({ id: other.id }))?.state, "running");
    });
  });

  suite("cancelJob", () => {
    testCase("cancels a queued job once", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      assert.equal(await ctx.store().cancelJob({ id }), true);
      const job = await ctx.store().getJob({ id });
      assert.equal(job?.state, "cancelled");
      assert.ok(job?.finishedAt instanceof Date);
      assert.equal(await ctx.store().cancelJob({ id }), false);
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 }), []);
    });

    testCase("cancels a running job so that its worker's outcome is refused", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      assert.equal(await ctx.store().cancelJob({ id: job.id }), true);
      assert.deepStrictEqual(await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...job, resultJson: null, durationMs: 1 }] }), []);
      assert.equal((await ctx.store().getJob({ id: job.id }))?.state, "cancelled");
    });

    testCase("refuses to cancel a finished or unknown job", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...job, resultJson: null, durationMs: 1 }] });
      assert.equal(await ctx.store().cancelJob({ id: job.id }), false);
      assert.equal(await ctx.store().cancelJob({ id: "999999999999" }), false);
      assert.equal(await ctx.store().cancelJob({ id: "not-an-id" }), false);
    });
  });

  suite("cancelJobs", () => {
    testCase("cancels a queue's jobs in the given states, at most limit per call, leaving running jobs and other queues alone", async () => {
      const queue = ctx.freshQueue();
      const other = ctx.freshQueue();
      const running = await ctx.store().enqueue(newJob(queue, { n: 0 }, { priority: 10 }));
      const retrying = await ctx.store().enqueue(newJob(queue, { n: 1 }, { priority: 9 }));
      const queued = await ctx.store().enqueueMany([2, 3, 4].map((n) => newJob(queue, { n })));
      const elsewhere = await ctx.store().enqueue(newJob(other, {}));
      const [first, second] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 2, leaseMs: 60_000 });
      assert.deepStrictEqual([first?.id, second?.id], [running.id, retrying.id]);
      const failure = { message: "Error: upstream 503", code: null };
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...second!, delayMs: 3_600_000, failure, spendAttempt: true }] });

      assert.equal(await ctx.store().cancelJobs({ queue, states: ["queued"], limit: 2 }), 2);
      assert.equal(await ctx.store().cancelJobs({ queue, states: ["queued"], limit: 2 }), 1);
      assert.equal(await ctx.store().cancelJobs({ queue, states: ["queued"], limit: 2 }), 0);
      for (const { id } of queued) {
        const job = await ctx.store().getJob({ id });
        assert.equal(job?.state, "cancelled");
        assert.ok(job?.finishedAt instanceof Date);
      }
      assertFields(await ctx.store().getJob({ id: retrying.id }), { state: "failed" });

      assert.equal(await ctx.store().cancelJobs({ queue, states: ["queued", "failed"], limit: 10 }), 1);
      assertFields(await ctx.store().getJob({ id: retrying.id }), { state: "cancelled" });
      assertFields(await ctx.store().getJob({ id: running.id }), { state: "running", lockedBy: "w" });
      assertFields(await ctx.store().getJob({ id: elsewhere.id }), { state: "queued" });
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000 }), []);
    });

    testCase("frees the dedupe keys of the jobs it cancels", async () => {
      const queue = ctx.freshQueue();
      const first = await ctx.store().enqueue(newJob(queue, {}, { dedupeKey: "invoice:812" }));
      assert.equal(await ctx.store().cancelJobs({ queue, states: ["queued"], limit: 1 }), 1);
      const again = await ctx.store().enqueue(newJob(queue, {}, { dedupeKey: "invoice:812" }));
      assert.equal(again.duplicate, false);
      assert.notEqual(again.id, first.id);
    });
  });

  suite("runJobNow", () => {
    testCase("makes a job scheduled for later due now, keeping its attempts", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { runAt: new Date(ctx.now() + 3_600_000) }));
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 }), []);
      assert.equal(await ctx.store().runJobNow({ id }), true);
      const record = await ctx.store().getJob({ id });
      assertFields(record, { state: "queued", attempts: 0, maxAttempts: 3 });
      assert.ok((record?.runAt.getTime() ?? Infinity) <= ctx.now() + 1_000, "run_at is now");
      const [claimed] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 });
      assertFields(claimed, { id, attempt: 1 });
    });

    testCase("refuses a job that runs, has finished or does not exist", async () => {
      const queue = ctx.freshQueue();
      const running = await ctx.store().enqueue(newJob(queue, {}));
      await claimOne(ctx.store(), queue, "w");
      assert.equal(await ctx.store().runJobNow({ id: running.id }), false);
      const cancelled = await ctx.store().enqueue(newJob(queue, { n: 2 }, { runAt: new Date(ctx.now() + 3_600_000) }));
      await ctx.store().cancelJob({ id: cancelled.id });
      assert.equal(await ctx.store().runJobNow({ id: cancelled.id }), false);
      assert.equal((await ctx.store().getJob({ id: cancelled.id }))?.state, "cancelled");
      assert.equal(await ctx.store().runJobNow({ id: "999999999999" }), false);
    });
  });

  suite("retryJob", () => {
    testCase("queues a dead job again now with a fresh attempt budget", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 3, runAt: new Date(ctx.now() - 60_000) }));
      const job = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: { message: "nope", code: "STINT_PERMANENT" } }] });
      assert.equal(await ctx.store().retryJob({ id }), true);
      const record = await ctx.store().getJob({ id });
      assertFields(record, { state: "queued", attempts: 1, maxAttempts: 4, lockedUntil: null, finishedAt: null });
      const [again] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 });
      assertFields(again, { id, attempt: 2, maxAttempts: 4 });
    });

    testCase("queues a cancelled job again", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      await ctx.store().cancelJob({ id });
      assert.equal(await ctx.store().retryJob({ id }), true);
      assert.equal((await ctx.store().getJob({ id }))?.state, "queued");
    });

    testCase("refuses a job that is queued, running, succeeded or unknown", async () => {
      const queue = ctx.freshQueue();
      const queued = await ctx.store().enqueue(newJob(queue, { n: 1 }, { priority: -1 }));
      const running = await ctx.store().enqueue(newJob(queue, { n: 2 }, { priority: 1 }));
      const job = await claimOne(ctx.store(), queue, "w");
      assert.equal(job.id, running.id);
      assert.equal(await ctx.store().retryJob({ id: queued.id }), false);
      assert.equal(await ctx.store().retryJob({ id: running.id }), false);
      await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...job, resultJson: null, durationMs: 1 }] });
      assert.equal(await ctx.store().retryJob({ id: running.id }), false);
      assert.equal(await ctx.store().retryJob({ id: "999999999999" }), false);
    });

    testCase("refuses, naming the holder, when another active job now holds the dedupe key", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { dedupeKey: "k" }));
      const job = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: { message: "dead", code: null } }] });
      const holder = await ctx.store().enqueue(newJob(queue, {}, { dedupeKey: "k" }));
      assert.equal(holder.duplicate, false);
      const error = await rejectionOf(ctx.store().retryJob({ id }));
      assertContains(error.message, holder.id);
      assertContains(error.message, "dedupe key");
      assert.equal((await ctx.store().getJob({ id }))?.state, "dead");
    });
  });

  suite("getJob", () => {
    testCase("returns undefined for an unknown or malformed id", async () => {
      assert.equal(await ctx.store().getJob({ id: "999999999999" }), undefined);
      assert.equal(await ctx.store().getJob({ id: "abc" }), undefined);
      assert.equal(await ctx.store().getJob({ id: "99999999999999999999999" }), undefined);
    });
  });

  suite("countByQueue", () => {
    testCase("counts every state, the due jobs and the age of the oldest due one", async () => {
      const queue = ctx.freshQueue();
      const old = new Date(ctx.now() - 120_000);
      const enqueued = await ctx
        .store()
        .enqueueMany([
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
      assert.equal((runs!.payload as { n: string }).n, "runs");
      await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...succeeds!, resultJson: null, durationMs: 1 }] });
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...dies!, failure: { message: "x", code: null } }] });
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...retries!, delayMs: 0, failure: { message: "again", code: null }, spendAttempt: true }] });
      assert.equal(await ctx.store().cancelJob({ id: enqueued[7]!.id }), true);
      const counts = await ctx.store().countByQueue({ queues: [queue] });
      assert.equal(counts.length, 1);
      const [row] = counts;
      assert.equal(row?.queue, queue);
      assert.deepStrictEqual(row?.counts, { blocked: 0, queued: 3, running: 1, failed: 1, succeeded: 1, dead: 1, cancelled: 1 });
      assert.equal(row?.due, 3);
      assertWithin(row?.oldestDueAgeMs, 119_000, 180_000);
      assert.ok(!("completedSince" in row));
    });

    testCase("counts the jobs that succeeded within a window when asked", async () => {
      const queue = ctx.freshQueue();
      const idle = ctx.freshQueue();
      await ctx.store().enqueueMany([newJob(queue, {}), newJob(queue, {}), newJob(queue, {})]);
      const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      await ctx.store().completeJobs({ workerId: "w", jobs: claimed.slice(0, 2).map((job) => ({ ...job, resultJson: null, durationMs: 1 })) });
      const counts = await ctx.store().countByQueue({ queues: [queue, idle], completedSinceMs: 300_000 });
      const byQueue = new Map(counts.map((row) => [row.queue, row]));
      assert.equal(byQueue.get(queue)?.completedSince, 2);
      assert.equal(byQueue.get(idle)?.completedSince, 0);
      const [none] = await ctx.store().countByQueue({ queues: [queue], completedSinceMs: 0 });
      assert.equal(none?.completedSince, 0);
    });

    testCase("reports the requested queues, with zeros for a queue without jobs", async () => {
      const busy = ctx.freshQueue();
      const idle = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(busy, {}));
      await ctx.store().cancelJob({ id });
      const counts = await ctx.store().countByQueue({ queues: [idle, busy] });
      assert.deepStrictEqual(
        counts.map((row) => row.queue),
        [busy, idle].sort(),
      );
      const byQueue = new Map(counts.map((row) => [row.queue, row]));
      assert.equal(byQueue.get(busy)?.counts.cancelled, 1);
      assert.deepStrictEqual(byQueue.get(idle), {
        queue: idle,
        counts: { blocked: 0, queued: 0, running: 0, failed: 0, succeeded: 0, dead: 0, cancelled: 0 },
        due: 0,
        oldestDueAgeMs: null,
      });
      const all = await ctx.store().countByQueue();
      assertContains(
        all.map((row) => row.queue),
        busy,
      );
      assertLacks(
        all.map((row) => row.queue),
        idle,
      );
    });
  });
}
