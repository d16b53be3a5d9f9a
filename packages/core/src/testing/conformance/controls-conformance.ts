import assert from "node:assert/strict";
import type { JobStore } from "../../store/job-store";
import { assertFields, assertWithin } from "./conformance-assertions";
import { newJob, type ConformanceContext } from "./conformance-harness";
import { suite, testCase } from "./test-runner";

/** How many jobs of `queue` are running now. */
async function runningIn<Tx>(store: JobStore<Tx>, queue: string): Promise<number> {
  const [counts] = await store.countByQueue({ queues: [queue] });
  return counts?.counts.running ?? 0;
}

/** setQueueControls, listQueueControls and what the controls do to claims. */
export function describeControlsConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  const enqueue = (queue: string, count: number) => ctx.store().enqueueMany(Array.from({ length: count }, (_, n) => newJob(queue, { n })));
  const claim = (queue: string, limit: number, workerId = "w1") => ctx.store().claimBatch({ queue, workerId, limit, leaseMs: 60_000 });

  suite("queue controls", () => {
    testCase("stores, changes and lists a queue's controls; null removes a cap or a limit", async () => {
      const queue = ctx.freshQueue();
      const mine = async () => (await ctx.store().listQueueControls()).filter((controls) => controls.queue === queue);
      assert.deepStrictEqual(await mine(), []);
      await ctx.store().setQueueControls(queue, { maxRunning: 3, rateLimit: { limit: 100, periodMs: 60_000 } });
      const paused = await ctx.store().setQueueControls(queue, { paused: true });
      assertFields(paused, { queue, paused: true, maxRunning: 3, rateLimit: { limit: 100, periodMs: 60_000 } });
      assert.ok(paused.updatedAt instanceof Date);
      await ctx.store().setQueueControls(queue, { maxRunning: null, rateLimit: null });
      const [controls, ...others] = await mine();
      assert.deepStrictEqual(others, []);
      assertFields(controls, { queue, paused: true, maxRunning: null, rateLimit: null });
    });

    testCase("stores a queue's own retention field by field, null going back to the global one, and claims as if it had no controls", async () => {
      const queue = ctx.freshQueue();
      await enqueue(queue, 2);
      const set = await ctx.store().setQueueControls(queue, { retention: { succeededDays: 90, deadDays: 365 } });
      assertFields(set, { queue, paused: false, maxRunning: null, rateLimit: null, retention: { succeededDays: 90, deadDays: 365, cancelledDays: null } });
      const changed = await ctx.store().setQueueControls(queue, { retention: { succeededDays: null, cancelledDays: 0 }, maxRunning: 5 });
      assertFields(changed, { maxRunning: 5, retention: { succeededDays: null, deadDays: 365, cancelledDays: 0 } });
      const [listed] = (await ctx.store().listQueueControls()).filter((controls) => controls.queue === queue);
      assert.deepStrictEqual(listed!.retention, { succeededDays: null, deadDays: 365, cancelledDays: 0 });
      const other = ctx.freshQueue();
      await enqueue(other, 2);
      await ctx.store().setQueueControls(other, { retention: { deadDays: 1 } });
      const claimed = await claim(other, 10);
      assert.equal(claimed.length, 2);
      assert.equal(claimed.hold, undefined);
    });

    testCase("claims nothing from a paused queue, says so, still takes enqueues, and claims again once resumed", async () => {
      const queue = ctx.freshQueue();
      await enqueue(queue, 3);
      await ctx.store().setQueueControls(queue, { paused: true });
      const held = await claim(queue, 10);
      assert.equal(held.length, 0);
      assert.deepStrictEqual(held.hold, { paused: true, retryAfterMs: null });
      await enqueue(queue, 1);
      await ctx.store().setQueueControls(queue, { paused: false });
      const claimed = await claim(queue, 10);
      assert.equal(claimed.length, 4);
      assert.equal(claimed.hold, undefined);
    });

    testCase("never lets concurrent claims of many workers take a capped queue past its cap", async () => {
      const queue = ctx.freshQueue();
      await enqueue(queue, 60);
      await ctx.store().setQueueControls(queue, { maxRunning: 3 });
      for (let round = 0; round < 5; round += 1) {
        const batches = await Promise.all(Array.from({ length: 8 }, (_, n) => claim(queue, 2, `w${n}`)));
        assertWithin(await runningIn(ctx.store(), queue), 0, 3, `round ${round}`);
        assert.equal(batches.flat().length, 3);
        const held = batches.filter((batch) => batch.hold !== undefined);
        assertWithin(held.length, 5, 8, "claims told to come back later");
        for (const batch of held) {
          assert.equal(batch.hold?.paused, false);
          assertWithin(batch.hold?.retryAfterMs, 1, 60_000, "a capped claim says when to ask again");
        }
        // Finish what ran, so the next round has free slots again.
        for (const [n, batch] of batches.entries()) {
          if (batch.length > 0)
            await ctx
              .store()
              .completeJobs({ workerId: `w${n}`, jobs: batch.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: null, durationMs: 1 })) });
        }
        assert.equal(await runningIn(ctx.store(), queue), 0);
      }
    });

    testCase("starts at most the burst of a rate limit at once, then as many as the elapsed time allows, never more than the burst", async () => {
      const queue = ctx.freshQueue();
      await enqueue(queue, 100);
      await ctx.store().setQueueControls(queue, { rateLimit: { limit: 50, periodMs: 1_000 } });
      const first = await claim(queue, 100);
      assert.equal(first.length, 5, "a burst is a tenth of a second's worth");
      assertWithin(first.hold?.retryAfterMs, 1, 20);
      await ctx.harness().waitUntilPast(new Date(ctx.now() + 60));
      assertWithin((await claim(queue, 100)).length, 3, 5, "60 ms later: 3 more tokens, or a few more if the clock moved on");
      await ctx.harness().waitUntilPast(new Date(ctx.now() + 500));
      assert.equal((await claim(queue, 100)).length, 5, "an idle spell refills the bucket to its burst, no more");
    });

    testCase("claims as before from a queue whose controls set nothing", async () => {
      const queue = ctx.freshQueue();
      await enqueue(queue, 4);
      await ctx.store().setQueueControls(queue, { paused: false });
      const claimed = await claim(queue, 10);
      assert.equal(claimed.length, 4);
      assert.equal(claimed.hold, undefined);
    });
  });
}
