import assert from "node:assert/strict";
import { assertFields, assertWithin, assertLacks } from "./conformance-assertions";
import { suite, testCase } from "./test-runner";
import { claimOne, newJob, type ConformanceContext } from "./conformance-harness";

/** readQueueGauges: what a metrics scrape reads. */
export function describeGaugesConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("readQueueGauges", () => {
    testCase("counts waiting, running and dead jobs, the due ones and the lag, as countByQueue does", async () => {
      const queue = ctx.freshQueue();
      const store = ctx.store();
      const enqueue = (n: number, delayMs = 0) => store.enqueue(newJob(queue, { n }, { delayMs }));
      for (const n of [1, 2, 3, 4, 5, 6]) await enqueue(n);
      await enqueue(7, 3_600_000);
      const retrying = await claimOne(store, queue, "w");
      const dying = await claimOne(store, queue, "w");
      const succeeding = await claimOne(store, queue, "w");
      await claimOne(store, queue, "w");
      await store.scheduleRetries({
        workerId: "w",
        jobs: [{ id: retrying.id, attempt: 1, delayMs: 0, failure: { message: "flaky", code: null }, spendAttempt: true }],
      });
      await store.markJobsDead({ workerId: "w", jobs: [{ id: dying.id, attempt: 1, failure: { message: "no", code: null } }] });
      await store.completeJobs({ workerId: "w", jobs: [{ id: succeeding.id, attempt: 1, resultJson: null, durationMs: 1 }] });

      const [gauges, ...rest] = await store.readQueueGauges({ queues: [queue] });
      assert.deepStrictEqual(rest, []);
      assertFields(gauges, { queue, blocked: 0, queued: 3, failed: 1, running: 1, dead: 1, due: 3 });
      assertWithin(gauges?.oldestDueAgeMs, 0, Infinity);
      const [counts] = await store.countByQueue({ queues: [queue] });
      assertFields(gauges, {
        queued: counts?.counts.queued,
        failed: counts?.counts.failed,
        running: counts?.counts.running,
        dead: counts?.counts.dead,
        due: counts?.due,
      });
    });

    testCase("reports a queue asked for by name with zeros and no lag when it has no such jobs", async () => {
      const queue = ctx.freshQueue();
      const succeeded = ctx.freshQueue();
      await ctx.store().enqueue(newJob(succeeded, { n: 1 }));
      const job = await claimOne(ctx.store(), succeeded, "w");
      await ctx.store().completeJobs({ workerId: "w", jobs: [{ id: job.id, attempt: 1, resultJson: null, durationMs: 1 }] });
      assert.deepStrictEqual(
        await ctx.store().readQueueGauges({ queues: [succeeded, queue] }),
        [
          { queue: succeeded, blocked: 0, queued: 0, failed: 0, running: 0, dead: 0, due: 0, oldestDueAgeMs: null },
          { queue, blocked: 0, queued: 0, failed: 0, running: 0, dead: 0, due: 0, oldestDueAgeMs: null },
        ].sort((a, b) => (a.queue < b.queue ? -1 : 1)),
      );
      const all = await ctx.store().readQueueGauges();
      assertLacks(
        all.map((row) => row.queue),
        succeeded,
        "without queues, only queues with waiting, running or dead jobs",
      );
    });
  });
}
