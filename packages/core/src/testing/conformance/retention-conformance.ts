import assert from "node:assert/strict";
import { assertFields, assertWithin } from "./conformance-assertions";
import { suite, testCase } from "./test-runner";
import type { ClaimedJob } from "../../job/job-record";
import type { JobStore } from "../../store/job-store";
import { claimOne, newJob, type ConformanceContext } from "./conformance-harness";

/** Claims the queue's next job and finishes it as told (each call is its own statement, so finish times differ). */
async function finishNext<Tx>(store: JobStore<Tx>, queue: string, how: "succeed" | "die"): Promise<ClaimedJob> {
  const job = await claimOne(store, queue, "w");
  if (how === "succeed") await store.completeJobs({ workerId: "w", jobs: [{ ...job, resultJson: null, durationMs: 1 }] });
  else await store.markJobsDead({ workerId: "w", jobs: [{ ...job, failure: { message: "gave up", code: null } }] });
  return job;
}

/** Finishes the queue's next `count` jobs one after the other, so their finish times are in order. */
async function finishSeveral<Tx>(store: JobStore<Tx>, queue: string, how: "succeed" | "die", count: number): Promise<ClaimedJob[]> {
  const finished: ClaimedJob[] = [];
  for (let n = 0; n < count; n += 1) finished.push(await finishNext(store, queue, how));
  return finished;
}

/** deleteFinishedBefore and retryDeadJobs. */
export function describeRetentionConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("deleteFinishedBefore", () => {
    testCase("keeps the jobs of exceptQueues, and deletes the same states of other queues", async () => {
      const spared = ctx.freshQueue();
      const other = ctx.freshQueue();
      await ctx.store().enqueueMany([newJob(spared, {}), newJob(other, {})]);
      const kept = await finishNext(ctx.store(), spared, "succeed");
      const gone = await finishNext(ctx.store(), other, "succeed");
      await ctx.harness().waitUntilPast(new Date((await ctx.store().getJob({ id: gone.id }))!.finishedAt!.getTime() + 1));
      const deleteOld = () => ctx.store().deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 0, limit: 1_000, exceptQueues: [spared] });
      while ((await deleteOld()) >= 1_000);
      assert.equal(await ctx.store().getJob({ id: gone.id }), undefined);
      assertFields(await ctx.store().getJob({ id: kept.id }), { state: "succeeded" });
      assert.equal(await ctx.store().deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 0, limit: 10, queues: [spared] }), 1);
    });

    testCase("deletes old finished jobs of the given states, oldest first, and no active job", async () => {
      const queue = ctx.freshQueue();
      const other = ctx.freshQueue();
      const jobs = await ctx.store().enqueueMany(Array.from({ length: 8 }, (_, n) => newJob(queue, { n }, { priority: 10 - n })));
      const [s1, s2, s3] = await finishSeveral(ctx.store(), queue, "succeed", 3);
      const dead = await finishNext(ctx.store(), queue, "die");
      const retrying = await claimOne(ctx.store(), queue, "w");
      const failure = { message: "later", code: null };
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...retrying, delayMs: 3_600_000, failure, spendAttempt: true }] });
      const running = await claimOne(ctx.store(), queue, "w");
      const [cancelled, queued] = [jobs[6]!, jobs[7]!];
      await ctx.store().cancelJob({ id: cancelled.id });
      const elsewhere = await ctx.store().enqueue(newJob(other, {}));
      await ctx.store().cancelJob({ id: elsewhere.id });
      const latest = await ctx.store().getJob({ id: cancelled.id });
      await ctx.harness().waitUntilPast(new Date(latest!.finishedAt!.getTime() + 1));

      const deleteOld = (states: ("succeeded" | "dead" | "cancelled")[], limit: number, olderThanMs = 0) =>
        ctx.store().deleteFinishedBefore({ states, olderThanMs, limit, queues: [queue] });
      assert.equal(await deleteOld(["succeeded"], 10, 3_600_000), 0);
      // A store may take more than limit in one call (a whole partition of history), but always the oldest first.
      const first = await deleteOld(["succeeded"], 2);
      assertWithin(first, 2, 3);
      assert.equal(await ctx.store().getJob({ id: s1!.id }), undefined);
      assert.equal(await ctx.store().getJob({ id: s2!.id }), undefined);
      if (first === 2) {
        assertFields(await ctx.store().getJob({ id: s3!.id }), { state: "succeeded" });
        assert.equal(await deleteOld(["succeeded"], 2), 1);
      }
      assert.equal(await ctx.store().getJob({ id: s3!.id }), undefined);
      assert.equal(await deleteOld(["succeeded"], 2), 0);
      assertFields(await ctx.store().getJob({ id: dead.id }), { state: "dead" });

      assert.equal(await deleteOld(["succeeded", "dead", "cancelled"], 100), 2);
      for (const id of [dead.id, cancelled.id]) assert.equal(await ctx.store().getJob({ id }), undefined);
      assertFields(await ctx.store().getJob({ id: retrying.id }), { state: "failed" });
      assertFields(await ctx.store().getJob({ id: running.id }), { state: "running" });
      assertFields(await ctx.store().getJob({ id: queued.id }), { state: "queued" });
      assertFields(await ctx.store().getJob({ id: elsewhere.id }), { state: "cancelled" });
    });

    testCase("never deletes a job that was retried after it finished", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueue(newJob(queue, {}));
      const dead = await finishNext(ctx.store(), queue, "die");
      const { finishedAt } = (await ctx.store().getJob({ id: dead.id }))!;
      await ctx.harness().waitUntilPast(new Date(finishedAt!.getTime() + 1));
      assert.equal(await ctx.store().retryJob({ id: dead.id }), true);
      assert.equal(await ctx.store().deleteFinishedBefore({ states: ["dead"], olderThanMs: 0, limit: 10, queues: [queue] }), 0);
      assertFields(await ctx.store().getJob({ id: dead.id }), { state: "queued" });
    });
  });

  suite("retryDeadJobs", () => {
    testCase("queues up to limit dead jobs of the queue again with a fresh attempt budget", async () => {
      const queue = ctx.freshQueue();
      const other = ctx.freshQueue();
      await ctx.store().enqueueMany([1, 2, 3].map((n) => newJob(queue, { n }, { maxAttempts: 2 })));
      const dead = await finishSeveral(ctx.store(), queue, "die", 3);
      await ctx.store().enqueue(newJob(other, {}));
      const untouched = await finishNext(ctx.store(), other, "die");
      const cancelled = await ctx.store().enqueue(newJob(queue, {}));
      await ctx.store().cancelJob({ id: cancelled.id });

      assert.equal(await ctx.store().retryDeadJobs({ queue, limit: 2 }), 2);
      assert.equal(await ctx.store().retryDeadJobs({ queue, limit: 2 }), 1);
      assert.equal(await ctx.store().retryDeadJobs({ queue, limit: 2 }), 0);
      for (const job of dead) {
        const record = await ctx.store().getJob({ id: job.id });
        assertFields(record, { state: "queued", attempts: 1, maxAttempts: 3, finishedAt: null, lockedUntil: null });
      }
      assertFields(await ctx.store().getJob({ id: untouched.id }), { state: "dead" });
      assertFields(await ctx.store().getJob({ id: cancelled.id }), { state: "cancelled" });
      const again = await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000 });
      assert.deepStrictEqual(
        again.map((job) => job.attempt),
        [2, 2, 2],
      );
    });

    testCase("leaves a dead job whose dedupe key an active job holds, and queues one of several dead jobs sharing a free key", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueue(newJob(queue, { n: "first k" }, { dedupeKey: "k" }));
      const firstK = await finishNext(ctx.store(), queue, "die");
      await ctx.store().enqueue(newJob(queue, { n: "second k" }, { dedupeKey: "k" }));
      const secondK = await finishNext(ctx.store(), queue, "die");
      await ctx.store().enqueue(newJob(queue, { n: "held" }, { dedupeKey: "h" }));
      const held = await finishNext(ctx.store(), queue, "die");
      await ctx.store().enqueue(newJob(queue, { n: "plain" }));
      const plain = await finishNext(ctx.store(), queue, "die");
      const holder = await ctx.store().enqueue(newJob(queue, { n: "holder" }, { dedupeKey: "h", delayMs: 3_600_000 }));
      assert.equal(holder.duplicate, false);

      assert.equal(await ctx.store().retryDeadJobs({ queue, limit: 10 }), 2);
      assert.equal(await ctx.store().retryDeadJobs({ queue, limit: 10 }), 0);
      const stateOf = async (job: ClaimedJob) => (await ctx.store().getJob({ id: job.id }))?.state;
      const states = await Promise.all([firstK, secondK, held, plain].map(stateOf));
      assert.equal(states.filter((state, index) => index < 2 && state === "queued").length, 1);
      assert.deepStrictEqual(states.slice(2), ["dead", "queued"]);
    });
  });
}
