import assert from "node:assert/strict";
import { assertFields } from "./conformance-assertions";
import { suite, testCase } from "./test-runner";
import type { DeadHookClaim } from "../../store/dead-hook-claim";
import type { JobStore } from "../../store/job-store";
import { claimAndAbandon, claimOne, newJob, type ConformanceContext } from "./conformance-harness";

const permanent = { message: "PermanentError: invoice 812 does not exist\n    at handler (job.ts:1:1)", code: "STINT_PERMANENT" };

/** Claims every pending hook of `queue` as `workerId` (with a long claim). */
function claimAll<Tx>(store: JobStore<Tx>, queue: string, workerId: string, leaseMs = 60_000): Promise<readonly DeadHookClaim[]> {
  return store.claimDeadHooks({ queue, workerId, limit: 1_000, leaseMs });
}

/** claimDeadHooks and finishDeadHooks: every road to `dead` leaves one pending hook, claimed by one worker at a time. */
export function describeDeadHooksConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("onDead hooks pending for dead jobs", () => {
    testCase("records one pending hook per death a worker commits, with the death's attempt and error", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, { invoiceId: 812 }));
      const job = await claimOne(ctx.store(), queue, "w1");
      assert.deepStrictEqual(await ctx.store().markJobsDead({ workerId: "w1", jobs: [{ ...job, failure: permanent }] }), [id]);

      const [claim, ...rest] = await claimAll(ctx.store(), queue, "hooks-1");
      assert.deepStrictEqual(rest, []);
      assertFields(claim, { jobId: id, attempt: 1, delivery: 1, errorCode: "STINT_PERMANENT", lastError: permanent.message });
      assert.ok(claim!.diedAt instanceof Date);
      assertFields(claim!.job, { id, queue, state: "dead", attempts: 1 });
      assert.deepStrictEqual(claim!.job!.payload, { invoiceId: 812 });
      assert.deepStrictEqual(await claimAll(ctx.store(), queue, "hooks-2"), [], "held by the first claim");
    });

    testCase("records a pending hook for a job the lease rescue makes dead, and none for one it retries", async () => {
      const queue = ctx.freshQueue();
      const { id: last } = await ctx.store().enqueue(newJob(queue, { n: 1 }, { maxAttempts: 1 }));
      const { id: again } = await ctx.store().enqueue(newJob(queue, { n: 2 }, { maxAttempts: 2 }));
      await claimAndAbandon(ctx.harness(), queue, "died");
      await claimAndAbandon(ctx.harness(), queue, "died");
      assert.deepStrictEqual(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 10 }), { retried: 1, dead: 1 });

      const claims = await claimAll(ctx.store(), queue, "hooks");
      assert.deepStrictEqual(
        claims.map((claim) => [claim.jobId, claim.attempt, claim.errorCode]),
        [[last, 1, "STINT_WORKER_DIED"]],
      );
      assert.match(claims[0]!.lastError ?? "", /^The worker died stopped .* during attempt 1 of 1 .* No attempts left\.$/);
      assert.equal((await ctx.store().getJob({ id: again }))!.state, "failed");
    });

    testCase("records nothing for successes, retries and cancels", async () => {
      const queue = ctx.freshQueue();
      for (let n = 0; n < 3; n += 1) await ctx.store().enqueue(newJob(queue, { n }));
      const [done, retried, running] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...done!, resultJson: null, durationMs: 1 }] });
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...retried!, delayMs: 60_000, failure: permanent, spendAttempt: true }] });
      assert.equal(await ctx.store().cancelJob({ id: running!.id }), true);
      assert.deepStrictEqual(await claimAll(ctx.store(), queue, "hooks"), []);
    });

    testCase("finishes a hook only for the worker that holds its claim", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: permanent }] });
      await claimAll(ctx.store(), queue, "hooks-1");
      assert.deepStrictEqual(await ctx.store().finishDeadHooks({ workerId: "intruder", hooks: [{ id, attempt: 1 }] }), []);
      assert.deepStrictEqual(await ctx.store().finishDeadHooks({ workerId: "hooks-1", hooks: [{ id, attempt: 2 }] }), [], "another death of the job");
      assert.deepStrictEqual(await ctx.store().finishDeadHooks({ workerId: "hooks-1", hooks: [{ id, attempt: 1 }] }), [id]);
      assert.deepStrictEqual(await ctx.store().finishDeadHooks({ workerId: "hooks-1", hooks: [{ id, attempt: 1 }] }), [], "already done");
      assert.deepStrictEqual(await ctx.store().finishDeadHooks({ workerId: "hooks-1", hooks: [] }), []);
    });

    testCase("hands a lapsed claim to the next claimer as a second delivery, after which the first one's finish misses", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: permanent }] });
      const [first] = await claimAll(ctx.store(), queue, "hooks-1", 1);
      assert.equal(first!.delivery, 1);
      await ctx.harness().waitUntilPast(new Date(ctx.now() + 5));
      const [second] = await claimAll(ctx.store(), queue, "hooks-2");
      assertFields(second, { jobId: id, attempt: 1, delivery: 2 });
      assert.deepStrictEqual(await ctx.store().finishDeadHooks({ workerId: "hooks-1", hooks: [{ id, attempt: 1 }] }), []);
      assert.deepStrictEqual(await ctx.store().finishDeadHooks({ workerId: "hooks-2", hooks: [{ id, attempt: 1 }] }), [id]);
      assert.deepStrictEqual(await claimAll(ctx.store(), queue, "hooks-3", 1), []);
    });

    testCase("keeps each death apart: a job retried after its hook and dead again has a new pending hook", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 1 }));
      const first = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...first, failure: permanent }] });
      await claimAll(ctx.store(), queue, "hooks");
      await ctx.store().finishDeadHooks({ workerId: "hooks", hooks: [{ id, attempt: 1 }] });
      assert.equal(await ctx.store().retryJob({ id }), true);
      const second = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...second, failure: { message: "Error: again", code: "STINT_UNKNOWN" } }] });
      const claims = await claimAll(ctx.store(), queue, "hooks");
      assert.deepStrictEqual(
        claims.map((claim) => [claim.jobId, claim.attempt, claim.delivery, claim.lastError]),
        [[id, 2, 1, "Error: again"]],
      );
    });

    testCase("claims only the given queue's deaths, and hands over a death whose job is gone without a job", async () => {
      const queue = ctx.freshQueue();
      const other = ctx.freshQueue();
      for (const name of [queue, other]) {
        await ctx.store().enqueue(newJob(name, {}));
        const job = await claimOne(ctx.store(), name, "w");
        await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: permanent }] });
      }
      // Deleted as finished before now: the store's clock must have moved past the deaths.
      await ctx.harness().waitUntilPast(new Date(ctx.now()));
      assert.equal(await ctx.store().deleteFinishedBefore({ states: ["dead"], olderThanMs: 0, limit: 100, queues: [queue] }), 1);
      const claims = await claimAll(ctx.store(), queue, "hooks");
      assert.equal(claims.length, 1);
      assert.equal(claims[0]!.job, undefined);
      assert.equal((await claimAll(ctx.store(), other, "hooks")).length, 1);
    });

    testCase("never gives one death to two of many racing claimers", async () => {
      const queue = ctx.freshQueue();
      const ids = (await ctx.store().enqueueMany(Array.from({ length: 60 }, (_, n) => newJob(queue, { n })))).map((result) => result.id);
      const jobs = await ctx.store().claimBatch({ queue, workerId: "w", limit: 60, leaseMs: 60_000 });
      await ctx.store().markJobsDead({ workerId: "w", jobs: jobs.map((job) => ({ ...job, failure: permanent })) });
      const claims = await Promise.all(
        Array.from({ length: 12 }, (_, n) => ctx.store().claimDeadHooks({ queue, workerId: `hooks-${n}`, limit: 8, leaseMs: 60_000 })),
      );
      const claimed = claims.flat().map((claim) => claim.jobId);
      assert.equal(new Set(claimed).size, claimed.length, "no death claimed twice");
      const rest = await claimAll(ctx.store(), queue, "late");
      assert.deepStrictEqual([...claimed, ...rest.map((claim) => claim.jobId)].sort(), [...ids].sort());
    });
  });
}
