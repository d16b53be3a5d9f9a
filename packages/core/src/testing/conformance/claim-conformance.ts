import assert from "node:assert/strict";
import { assertFields, assertWithin, assertSameMembers } from "./conformance-assertions";
import { suite, testCase } from "./test-runner";
import { ErrorCode } from "../../errors/error-codes";
import { claimAndAbandon, newJob, waitForLeaseExpiry, type ConformanceContext } from "./conformance-harness";

/** claimBatch: order, limits, exclusivity and reclaiming expired leases. */
export function describeClaimConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("claimBatch", () => {
    testCase("claims by priority (highest first), then run_at, then id, and never more than the limit", async () => {
      const queue = ctx.freshQueue();
      const ago = (seconds: number) => new Date(ctx.now() - seconds * 1_000);
      const ids: Record<string, string> = {};
      const add = async (name: string, priority: number, runAt: Date) => {
        ids[name] = (await ctx.store().enqueue(newJob(queue, { name }, { priority, runAt }))).id;
      };
      await add("old-low", 0, ago(60));
      await add("new-high", 5, ago(10));
      await add("old-high", 5, ago(30));
      await add("old-low-later-id", 0, ago(60));
      await add("negative", -3, ago(120));
      await add("future-high", 9, new Date(ctx.now() + 3_600_000));

      const first = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      assert.deepStrictEqual(
        first.map((job) => (job.payload as { name: string }).name),
        ["old-high", "new-high", "old-low"],
      );
      const rest = await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000 });
      assert.deepStrictEqual(
        rest.map((job) => (job.payload as { name: string }).name),
        ["old-low-later-id", "negative"],
      );
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000 }), []);
      assert.equal((await ctx.store().getJob({ id: ids["future-high"] as string }))?.state, "queued");
    });

    testCase("returns at most limit jobs when more are due", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany(Array.from({ length: 20 }, (_, n) => newJob(queue, { n })));
      assert.equal((await ctx.store().claimBatch({ queue, workerId: "w", limit: 7, leaseMs: 60_000 })).length, 7);
      assert.equal((await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 })).length, 1);
    });

    testCase("sets the claimed job running, owned by the worker, and counts the attempt", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, { a: 1 }, { maxAttempts: 4, priority: 2, timeoutMs: 500 }));
      const [claimed] = await ctx.store().claimBatch({ queue, workerId: "worker-1", limit: 5, leaseMs: 30_000 });
      assertFields(claimed, { id, queue, attempt: 1, maxAttempts: 4, priority: 2, timeoutMs: 500 });
      assert.deepStrictEqual(claimed?.payload, { a: 1 });
      const job = await ctx.store().getJob({ id });
      assertFields(job, { state: "running", lockedBy: "worker-1", attempts: 1 });
      const leaseMs = job!.lockedUntil!.getTime() - job!.startedAt!.getTime();
      assertWithin(leaseMs, 29_000, 30_001);
    });

    testCase("leaves jobs of other queues and jobs not yet due alone", async () => {
      const queue = ctx.freshQueue();
      const other = ctx.freshQueue();
      await ctx.store().enqueue(newJob(other, {}));
      await ctx.store().enqueue(newJob(queue, {}, { delayMs: 60_000 }));
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000 }), []);
    });

    testCase("gives every job to exactly one of 8 racing claimers", async () => {
      const queue = ctx.freshQueue();
      const enqueued = await ctx.store().enqueueMany(Array.from({ length: 500 }, (_, n) => newJob(queue, { n })));
      const claimer = async (workerId: string): Promise<string[]> => {
        const mine: string[] = [];
        for (;;) {
          const batch = await ctx.store().claimBatch({ queue, workerId, limit: 7, leaseMs: 60_000 });
          if (batch.length === 0) return mine;
          assertWithin(batch.length, -Infinity, 7);
          mine.push(...batch.map((job) => job.id));
        }
      };
      const perClaimer = await Promise.all(Array.from({ length: 8 }, (_, n) => claimer(`racer-${n}`)));
      const all = perClaimer.flat();
      assert.equal(all.length, 500);
      assert.deepStrictEqual(new Set(all), new Set(enqueued.map((result) => result.id)));
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "late", limit: 10, leaseMs: 60_000 }), []);
    });

    testCase("reclaims a job whose lease expired, as the next attempt", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 3 }));
      const lost = await claimAndAbandon(ctx.harness(), queue, "stalled");
      assert.equal(lost.attempt, 1);
      const [again] = await ctx.store().claimBatch({ queue, workerId: "rescuer", limit: 5, leaseMs: 60_000 });
      assertFields(again, { id, attempt: 2 });
      assertFields(await ctx.store().getJob({ id }), { state: "running", lockedBy: "rescuer", attempts: 2 });
    });

    testCase("with takeOverExpired: false, claims due jobs and leaves expired ones for a later claim", async () => {
      const queue = ctx.freshQueue();
      const { id: stalled } = await ctx.store().enqueue(newJob(queue, { n: 1 }, { maxAttempts: 3 }));
      await claimAndAbandon(ctx.harness(), queue, "stalled");
      const { id: due } = await ctx.store().enqueue(newJob(queue, { n: 2 }));
      const first = await ctx.store().claimBatch({ queue, workerId: "w", limit: 5, leaseMs: 60_000, takeOverExpired: false });
      assert.deepStrictEqual(
        first.map((job) => job.id),
        [due],
      );
      assertFields(await ctx.store().getJob({ id: stalled }), { state: "running", lockedBy: "stalled", attempts: 1 });
      const second = await ctx.store().claimBatch({ queue, workerId: "w", limit: 5, leaseMs: 60_000, takeOverExpired: true });
      assert.deepStrictEqual(
        second.map((job) => [job.id, job.attempt]),
        [[stalled, 2]],
      );
    });

    testCase("does not claim an expired job with no attempts left; the rescue marks it dead", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 1 }));
      await claimAndAbandon(ctx.harness(), queue, "stalled");
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w", limit: 5, leaseMs: 60_000 }), []);
      assert.deepStrictEqual(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 10 }), { retried: 0, dead: 1 });
      const job = await ctx.store().getJob({ id });
      assertFields(job, { state: "dead", errorCode: ErrorCode.WorkerDied, lockedUntil: null });
      assert.match(job?.lastError ?? "", /attempt 1\b/);
      assert.ok(job?.finishedAt instanceof Date);
    });

    testCase("fills a batch with expired jobs after the due ones, up to the limit", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany([newJob(queue, { n: 1 }), newJob(queue, { n: 2 })]);
      const [first] = await ctx.store().claimBatch({ queue, workerId: "stalled", limit: 1, leaseMs: 1 });
      const [second] = await ctx.store().claimBatch({ queue, workerId: "stalled", limit: 1, leaseMs: 1 });
      await waitForLeaseExpiry(ctx.harness(), [first!.id, second!.id]);
      await ctx.store().enqueueMany([newJob(queue, { n: 3 }), newJob(queue, { n: 4 })]);
      const batch = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      assert.equal(batch.length, 3);
      assertSameMembers(
        batch.filter((job) => job.attempt === 1).map((job) => (job.payload as { n: number }).n),
        [3, 4],
      );
      assert.equal(batch.filter((job) => job.attempt === 2).length, 1);
    });

    testCase("with maxTimeoutMs, leaves due and expired jobs whose timeout is longer", async () => {
      const queue = ctx.freshQueue();
      const [none, short, long] = await ctx
        .store()
        .enqueueMany([
          newJob(queue, { n: "none" }, { priority: 3 }),
          newJob(queue, { n: "short" }, { priority: 2, timeoutMs: 1_000 }),
          newJob(queue, { n: "long" }, { priority: 1, timeoutMs: 60_000 }),
        ]);
      const fitting = await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000, maxTimeoutMs: 1_000 });
      assert.deepStrictEqual(
        fitting.map((job) => job.id),
        [none!.id, short!.id],
      );
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000, maxTimeoutMs: 59_999 }), []);

      const [abandoned] = await ctx.store().claimBatch({ queue, workerId: "stalled", limit: 1, leaseMs: 1 });
      assert.equal(abandoned?.id, long!.id);
      await waitForLeaseExpiry(ctx.harness(), [long!.id]);
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000, maxTimeoutMs: 1_000 }), []);
      const [reclaimed] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000, maxTimeoutMs: 60_000 });
      assertFields(reclaimed, { id: long!.id, attempt: 2 });
    });
  });
}
