import type { JobStore } from "@stint/core";
import { expect } from "chai";
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
  describe("effects run once per key", () => {
    it("runs an effect once per key and gives later calls the recorded result", async () => {
      const key = `${ctx.freshQueue()}:email`;
      let runs = 0;
      const effect = async (): Promise<unknown> => {
        runs += 1;
        return { messageId: `m-${runs}`, at: [1, 2] };
      };
      const first = await ctx.store().runEffectOnce({ key, jobId: "1", resultJson }, effect);
      const second = await ctx.store().runEffectOnce({ key, jobId: "2", resultJson }, effect);
      const other = await ctx.store().runEffectOnce({ key: `${key}:other`, jobId: "2", resultJson }, effect);

      expect(first).to.deep.equal({ ran: true, result: { messageId: "m-1", at: [1, 2] } });
      expect(second).to.deep.equal({ ran: false, result: { messageId: "m-1", at: [1, 2] } });
      expect(other).to.deep.equal({ ran: true, result: { messageId: "m-2", at: [1, 2] } });
      expect(runs).to.equal(2);
    });

    it("keeps an effect's missing result apart from a null one", async () => {
      const prefix = ctx.freshQueue();
      await ctx.store().runEffectOnce({ key: `${prefix}:nothing`, jobId: "1", resultJson }, async () => undefined);
      await ctx.store().runEffectOnce({ key: `${prefix}:null`, jobId: "1", resultJson }, async () => null);
      const never = async (): Promise<never> => {
        throw new Error("must not run");
      };
      expect(await ctx.store().runEffectOnce({ key: `${prefix}:nothing`, jobId: "2", resultJson }, never)).to.deep.equal({
        ran: false,
        result: undefined,
      });
      expect(await ctx.store().runEffectOnce({ key: `${prefix}:null`, jobId: "2", resultJson }, never)).to.deep.equal({
        ran: false,
        result: null,
      });
    });

    it("makes the effect's writes once when 16 callers race for one key", async () => {
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

      expect(runs).to.equal(1);
      expect(outcomes.filter((outcome) => outcome.ran)).to.have.length(1);
      const winner = outcomes.find((outcome) => outcome.ran)!.result;
      for (const outcome of outcomes) expect(outcome.result).to.deep.equal(winner);
      expect(await jobsIn(ctx.store(), queue)).to.equal(1);
    });

    it("rolls back an effect that throws, leaves its key free and rethrows its error unchanged", async () => {
      const queue = ctx.freshQueue();
      const key = `${queue}:refund`;
      const failure = Object.assign(new Error("the provider refused"), { code: "23505", severity: "ERROR" });
      const error = await rejectionOf(
        ctx.store().runEffectOnce({ key, jobId: "1", resultJson }, async (transaction: Tx) => {
          await ctx.store().enqueue(newJob(queue, {}), transaction);
          throw failure;
        }),
      );
      expect(error).to.equal(failure);
      expect(await jobsIn(ctx.store(), queue), "the effect's write was rolled back").to.equal(0);

      const retry = await ctx.store().runEffectOnce({ key, jobId: "1", resultJson }, async (transaction: Tx) => {
        await ctx.store().enqueue(newJob(queue, {}), transaction);
        return "refunded";
      });
      expect(retry).to.deep.equal({ ran: true, result: "refunded" });
      expect(await jobsIn(ctx.store(), queue)).to.equal(1);
    });

    it("forgets keys older than the retention, so their effects can run again", async () => {
      const key = `${ctx.freshQueue()}:old`;
      await ctx.store().runEffectOnce({ key, jobId: "1", resultJson }, async () => 1);
      expect(await ctx.store().deleteEffectsBefore({ olderThanMs: 3_600_000, limit: 1_000 })).to.equal(0);
      expect((await ctx.store().runEffectOnce({ key, jobId: "1", resultJson }, async () => 2)).ran).to.equal(false);

      await ctx.harness().waitUntilPast(new Date(Date.now() + 1));
      expect(await ctx.store().deleteEffectsBefore({ olderThanMs: 0, limit: 100_000 })).to.be.greaterThan(0);
      expect(await ctx.store().runEffectOnce({ key, jobId: "1", resultJson }, async () => 2)).to.deep.equal({ ran: true, result: 2 });
    });
  });

  describe("completion in the job's own transaction", () => {
    it("commits the work's writes and the job's success together", async () => {
      const queue = ctx.freshQueue();
      const written = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");

      const outcome = await ctx.store().completeInTransaction({ workerId: "w", job, resultJson }, async (transaction: Tx) => {
        await ctx.store().enqueue(newJob(written, { for: id }), transaction);
        return { booked: true };
      });

      expect(outcome).to.deep.equal({ applied: true, value: { booked: true } });
      const record = await ctx.store().getJob({ id });
      expect(record).to.include({ state: "succeeded", lockedBy: "w", lockedUntil: null, attempts: 1 });
      expect(record?.result).to.deep.equal({ booked: true });
      expect(record?.finishedAt).to.be.instanceOf(Date);
      expect(record?.durationMs).to.be.a("number").and.at.least(0);
      expect(await jobsIn(ctx.store(), written)).to.equal(1);
    });

    it("rolls the work back and reports applied false for a stale owner", async () => {
      const queue = ctx.freshQueue();
      const written = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 5 }));
      const stale = await claimAndAbandon(ctx.harness(), queue, "stale");
      await claimOne(ctx.store(), queue, "fresh");

      const outcome = await ctx.store().completeInTransaction({ workerId: "stale", job: stale, resultJson }, async (transaction: Tx) => {
        await ctx.store().enqueue(newJob(written, {}), transaction);
        return "too late";
      });

      expect(outcome).to.deep.equal({ applied: false, value: undefined });
      expect(await jobsIn(ctx.store(), written), "the stale owner's writes were rolled back").to.equal(0);
      expect(await ctx.store().getJob({ id })).to.include({ state: "running", lockedBy: "fresh", attempts: 2, result: null });
    });

    it("rolls back when the work throws, rethrows its error and leaves the job running", async () => {
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

      expect(error).to.equal(failure);
      expect(await jobsIn(ctx.store(), written)).to.equal(0);
      expect(await ctx.store().getJob({ id })).to.include({ state: "running", lockedBy: "w" });
    });
  });
}
