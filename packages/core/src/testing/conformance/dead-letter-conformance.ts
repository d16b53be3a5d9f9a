import assert from "node:assert/strict";
import { deadLetterLinks, DEAD_LETTER_QUEUE_KEY } from "../../job/dead-letter";
import type { JobRecord } from "../../job/job-record";
import type { JobStore, NewJob } from "../../store/job-store";
import { claimAndAbandon, claimOne, newJob, type ConformanceContext } from "./conformance-harness";
import { suite, testCase } from "./test-runner";

const permanent = { message: "PermanentError: invoice 812 does not exist\n    at handler (job.ts:1:1)", code: "STINT_PERMANENT" };

/** A job of `queue` whose meta names `deadLetterQueue`, as `enqueue` writes it for a kind that has one. */
function routedJob(queue: string, deadLetterQueue: string, payload: unknown, overrides: Partial<NewJob> = {}): NewJob {
  return newJob(queue, payload, { metaJson: JSON.stringify({ tenant: "acme", [DEAD_LETTER_QUEUE_KEY]: deadLetterQueue }), ...overrides });
}

async function jobsOf<Tx>(store: JobStore<Tx>, queue: string): Promise<readonly JobRecord[]> {
  return store.listJobs({ queue, limit: 100 });
}

/** Dies at once: claimed by `workerId` and given up on. */
async function killOne<Tx>(store: JobStore<Tx>, queue: string, workerId: string): Promise<string> {
  const job = await claimOne(store, queue, workerId);
  assert.deepStrictEqual(await store.markJobsDead({ workerId, jobs: [{ ...job, failure: permanent }] }), [job.id]);
  return job.id;
}

/** Dead-letter queues: a death copies the job to the queue its meta names, in the statement that records the death. */
export function describeDeadLetterConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("dead-letter queues", () => {
    testCase("copies a job that dies to its dead-letter queue, with its payload, error and a link each way", async () => {
      const queue = ctx.freshQueue();
      const dlq = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(routedJob(queue, dlq, { invoiceId: 812 }, { priority: 3, maxAttempts: 4, timeoutMs: 9_000 }));
      await killOne(ctx.store(), queue, "w1");

      const [copy, ...more] = await jobsOf(ctx.store(), dlq);
      assert.deepStrictEqual(more, []);
      assert.equal(copy!.state, "queued");
      assert.deepStrictEqual(copy!.payload, { invoiceId: 812 });
      assert.deepStrictEqual([copy!.priority, copy!.maxAttempts, copy!.timeoutMs, copy!.attempts], [3, 4, 9_000, 0]);
      assert.equal(copy!.meta["tenant"], "acme", "the rest of the meta goes along");
      assert.deepStrictEqual(deadLetterLinks(copy!.meta), {
        queue: null,
        copyId: null,
        origin: { jobId: id, queue, attempts: 1, errorCode: "STINT_PERMANENT", error: "PermanentError: invoice 812 does not exist" },
      });
      const dead = await ctx.store().getJob({ id });
      assert.equal(dead!.state, "dead");
      assert.deepStrictEqual(deadLetterLinks(dead!.meta), { queue: dlq, copyId: copy!.id, origin: null });
      assert.equal(dead!.lastError, permanent.message, "the full error stays with the dead job");
      const claimed = await claimOne(ctx.store(), dlq, "w2");
      assert.equal(claimed.id, copy!.id, "the copy is claimable on its queue");
    });

    testCase("copies a job the lease rescue makes dead, and not one it retries", async () => {
      const queue = ctx.freshQueue();
      const dlq = ctx.freshQueue();
      const { id: last } = await ctx.store().enqueue(routedJob(queue, dlq, { n: 1 }, { maxAttempts: 1 }));
      await ctx.store().enqueue(routedJob(queue, dlq, { n: 2 }, { maxAttempts: 2 }));
      await claimAndAbandon(ctx.harness(), queue, "died");
      await claimAndAbandon(ctx.harness(), queue, "died");
      assert.deepStrictEqual(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 10 }), { retried: 1, dead: 1 });

      const copies = await jobsOf(ctx.store(), dlq);
      assert.deepStrictEqual(
        copies.map((copy) => [copy.payload, deadLetterLinks(copy.meta).origin?.jobId, deadLetterLinks(copy.meta).origin?.errorCode]),
        [[{ n: 1 }, last, "STINT_WORKER_DIED"]],
      );
    });

    testCase("copies nothing for a job without one, nor for successes, retries and cancels", async () => {
      const queue = ctx.freshQueue();
      const dlq = ctx.freshQueue();
      await ctx.store().enqueue(newJob(queue, { plain: true }));
      await killOne(ctx.store(), queue, "w");
      for (let n = 0; n < 3; n += 1) await ctx.store().enqueue(routedJob(queue, dlq, { n }));
      const [done, retried, running] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...done!, resultJson: null, durationMs: 1 }] });
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...retried!, delayMs: 60_000, failure: permanent, spendAttempt: true }] });
      assert.equal(await ctx.store().cancelJob({ id: running!.id }), true);
      assert.deepStrictEqual(await jobsOf(ctx.store(), dlq), []);
    });

    testCase("never copies a copy: two queues that name each other as dead-letter queues do not loop", async () => {
      const first = ctx.freshQueue();
      const second = ctx.freshQueue();
      await ctx.store().enqueue(routedJob(first, second, { n: 1 }));
      const original = await killOne(ctx.store(), first, "w");
      const copy = await killOne(ctx.store(), second, "w");
      assert.equal(deadLetterLinks((await ctx.store().getJob({ id: copy }))!.meta).origin?.jobId, original);
      assert.deepStrictEqual(
        (await jobsOf(ctx.store(), first)).map((job) => [job.id, job.state]),
        [[original, "dead"]],
      );
      assert.deepStrictEqual(
        (await jobsOf(ctx.store(), second)).map((job) => [job.id, job.state]),
        [[copy, "dead"]],
      );
    });

    testCase("copies a retried dead job again when it dies again, and links the newest copy", async () => {
      const queue = ctx.freshQueue();
      const dlq = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(routedJob(queue, dlq, {}));
      await killOne(ctx.store(), queue, "w");
      assert.equal(await ctx.store().retryJob({ id }), true);
      await killOne(ctx.store(), queue, "w");
      const copies = await jobsOf(ctx.store(), dlq);
      assert.equal(copies.length, 2);
      assert.equal(deadLetterLinks((await ctx.store().getJob({ id }))!.meta).copyId, copies[0]!.id, "the newest copy (listed first)");
    });
  });
}
