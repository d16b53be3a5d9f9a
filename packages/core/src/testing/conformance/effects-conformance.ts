import assert from "node:assert/strict";
import { assertFields, assertWithin, assertAbove } from "./conformance-assertions";
import { suite, testCase } from "./test-runner";
import type { JobStore } from "../../store/job-store";
import { claimAndAbandon, claimOne, newJob, rejectionOf, type ConformanceContext } from "./conformance-harness";

/** The ledger serialises results the way the worker does: `undefined` is no result. */
const resultJson = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

/** How many jobs `queue` holds, whatever their state: the writes an effect made through its transaction. */
async function jobsIn<Tx>(store: JobStore<Tx>, queue: string): Promise<number> {
  return (await store.listJobs({ queue, limit: 1_000 })).length;
}

/**
 * runEffectOnce, completeInTransaction and deleteEffectsBefore. The writes
 * made "through the transaction" are transactional enqueues into a queue of
 * the test's own, the one write every backend can do with its transaction.
 */
export function describeEffectsConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("effects run once per key", () => {
    testCase("runs an effect once per key and gives later calls the recorded result", async () => {
      const key = `${ctx.freshQueue()}:email`;
      let runs = 0;
      const effect = async (): Promise<unknown> => {
        runs += 1;
        return { messageId: `m-${runs}`, at: [1, 2] };
      };
      const first = await ctx.store().runEffectOnce({ key, jobId: "1", resultJson }, effect);
      const second = await ctx.store().runEffectOnce({ key, jobId: "2", resultJson }, effect);
      const other = await ctx.store().runEffectOnce({ key: `${key}:other`, jobId: "2", resultJson }, effect);

      assert.deepStrictEqual(first, { ran: true, result: { messageId: "m-1", at: [1, 2] } });
      assert.deepStrictEqual(second, { ran: false, result: { messageId: "m-1", at: [1, 2] } });
      assert.deepStrictEqual(other, { ran: true, result: { messageId: "m-2", at: [1, 2] } });
      assert.equal(runs, 2);
    });

    testCase("keeps an effect's missing result apart from a null one", async () => {
      const prefix = ctx.freshQueue();
      await ctx.store().runEffectOnce({ key: `${prefix}:nothing`, jobId: "1", resultJson }, async () => undefined);
      await ctx.store().runEffectOnce({ key: `${prefix}:null`, jobId: "1", resultJson }, async () => null);
      const never = async (): Promise<never> => {
        throw new Error("must not run");
      };
      assert.deepStrictEqual(await ctx.store().runEffectOnce({ key: `${prefix}:nothing`, jobId: "2", resultJson }, never), {
        ran: false,
        result: undefined,
      });
      assert.deepStrictEqual(await ctx.store().runEffectOnce({ key: `${prefix}:null`, jobId: "2", resultJson }, never), {
        ran: false,
        result: null,
      });
    });

    testCase("makes the effect's writes once when 16 callers race for one key", async () => {
      const queue = ctx.freshQueue();
      const key = `${queue}:charge`;
      let runs = 0;
      const outcomes = await Promise.all(
        Array.from({ length: 16 }, (_, caller) =>
          ctx.store().runEffectOnce({ key, jobId: String(caller + 1), resultJson }, async (transaction: Tx) => {
            runs += 1;
            await ctx.store().enqueue(newJob(queue, { caller }), transaction);
            // Hold the key for a moment so that the other callers arrive while it is taken.
            await new Promise((resolve) => setTimeout(resolve, 50));
            return { caller };
          }),
        ),
      );

      assert.equal(runs, 1);
      assert.equal(outcomes.filter((outcome) => outcome.ran).length, 1);
      const winner = outcomes.find((outcome) => outcome.ran)!.result;
      for (const outcome of outcomes) assert.deepStrictEqual(outcome.result, winner);
      assert.equal(await jobsIn(ctx.store(), queue), 1);
    });

    testCase("rolls back an effect that throws, leaves its key free and rethrows its error unchanged", async () => {
      const queue = ctx.freshQueue();
      const key = `${queue}:refund`;
      const failure = Object.assign(new Error("the provider refused"), { code: "23505", severity: "ERROR" });
      const error = await rejectionOf(
        ctx.store().runEffectOnce({ key, jobId: "1", resultJson }, async (transaction: Tx) => {
          await ctx.store().enqueue(newJob(queue, {}), transaction);
          throw failure;
        }),
      );
      assert.equal(error, failure);
      assert.equal(await jobsIn(ctx.store(), queue), 0, "the effect's write was rolled back");

      const retry = await ctx.store().runEffectOnce({ key, jobId: "1", resultJson }, async (transaction: Tx) => {
        await ctx.store().enqueue(newJob(queue, {}), transaction);
        return "refunded";
      });
      assert.deepStrictEqual(retry, { ran: true, result: "refunded" });
      assert.equal(await jobsIn(ctx.store(), queue), 1);
    });

    testCase("forgets keys older than the retention, so their effects can run again", async () => {
      const key = `${ctx.freshQueue()}:old`;
      await ctx.store().runEffectOnce({ key, jobId: "1", resultJson }, async () => 1);
      assert.equal(await ctx.store().deleteEffectsBefore({ olderThanMs: 3_600_000, limit: 1_000 }), 0);
      assert.equal((await ctx.store().runEffectOnce({ key, jobId: "1", resultJson }, async () => 2)).ran, false);

      await ctx.harness().waitUntilPast(new Date(ctx.now() + 1));
      assertAbove(await ctx.store().deleteEffectsBefore({ olderThanMs: 0, limit: 100_000 }), 0);
      assert.deepStrictEqual(await ctx.store().runEffectOnce({ key, jobId: "1", resultJson }, async () => 2), { ran: true, result: 2 });
    });
  });

  suite("completion in the job's own transaction", () => {
    testCase("commits the work's writes and the job's success together", async () => {
      const queue = ctx.freshQueue();
      const written = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");

      const outcome = await ctx.store().completeInTransaction({ workerId: "w", job, resultJson }, async (transaction: Tx) => {
        await ctx.store().enqueue(newJob(written, { for: id }), transaction);
        return { booked: true };
      });

      assert.deepStrictEqual(outcome, { applied: true, value: { booked: true } });
      const record = await ctx.store().getJob({ id });
      assertFields(record, { state: "succeeded", lockedBy: "w", lockedUntil: null, attempts: 1 });
      assert.deepStrictEqual(record?.result, { booked: true });
      assert.ok(record?.finishedAt instanceof Date);
      assertWithin(record?.durationMs, 0, Infinity);
      assert.equal(await jobsIn(ctx.store(), written), 1);
    });

    testCase("rolls the work back and reports applied false for a stale owner", async () => {
      const queue = ctx.freshQueue();
      const written = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 5 }));
      const stale = await claimAndAbandon(ctx.harness(), queue, "stale");
      await claimOne(ctx.store(), queue, "fresh");

      const outcome = await ctx.store().completeInTransaction({ workerId: "stale", job: stale, resultJson }, async (transaction: Tx) => {
        await ctx.store().enqueue(newJob(written, {}), transaction);
        return "too late";
      });

      assert.deepStrictEqual(outcome, { applied: false, value: undefined });
      assert.equal(await jobsIn(ctx.store(), written), 0, "the stale owner's writes were rolled back");
      assertFields(await ctx.store().getJob({ id }), { state: "running", lockedBy: "fresh", attempts: 2, result: null });
    });

    testCase("rolls back when the work throws, rethrows its error and leaves the job running", async () => {
      const queue = ctx.freshQueue();
      const written = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      const failure = new Error("the ledger is closed");

      const error = await rejectionOf(
        ctx.store().completeInTransaction({ workerId: "w", job, resultJson }, async (transaction: Tx) => {
          await ctx.store().enqueue(newJob(written, {}), transaction);
          throw failure;
        }),
      );

      assert.equal(error, failure);
      assert.equal(await jobsIn(ctx.store(), written), 0);
      assertFields(await ctx.store().getJob({ id }), { state: "running", lockedBy: "w" });
    });
  });
}
