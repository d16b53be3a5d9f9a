import type { JobStore } from "@stint/core";
import type { DeadHookClaim } from "@stint/core/driver";
import { expect } from "chai";
import { claimAndAbandon, claimOne, newJob, type ConformanceContext } from "./conformance-harness";

const permanent = { message: "PermanentError: invoice 812 does not exist\n    at handler (job.ts:1:1)", code: "STINT_PERMANENT" };

/** Claims every pending hook of `queue` as `workerId` (with a long claim). */
function claimAll<Tx>(store: JobStore<Tx>, queue: string, workerId: string, leaseMs = 60_000): Promise<readonly DeadHookClaim[]> {
  return store.claimDeadHooks({ queue, workerId, limit: 1_000, leaseMs });
}

/** claimDeadHooks and finishDeadHooks: every road to `dead` leaves one pending hook, claimed by one worker at a time. */
export function describeDeadHooksConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  describe("onDead hooks pending for dead jobs", () => {
    it("records one pending hook per death a worker commits, with the death's attempt and error", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, { invoiceId: 812 }));
      const job = await claimOne(ctx.store(), queue, "w1");
      expect(await ctx.store().markJobsDead({ workerId: "w1", jobs: [{ ...job, failure: permanent }] })).to.deep.equal([id]);

      const [claim, ...rest] = await claimAll(ctx.store(), queue, "hooks-1");
      expect(rest).to.deep.equal([]);
      expect(claim).to.include({ jobId: id, attempt: 1, delivery: 1, errorCode: "STINT_PERMANENT", lastError: permanent.message });
      expect(claim!.diedAt).to.be.instanceOf(Date);
      expect(claim!.job).to.include({ id, queue, state: "dead", attempts: 1 });
      expect(claim!.job!.payload).to.deep.equal({ invoiceId: 812 });
      expect(await claimAll(ctx.store(), queue, "hooks-2"), "held by the first claim").to.deep.equal([]);
    });

    it("records a pending hook for a job the lease rescue makes dead, and none for one it retries", async () => {
      const queue = ctx.freshQueue();
      const { id: last } = await ctx.store().enqueue(newJob(queue, { n: 1 }, { maxAttempts: 1 }));
      const { id: again } = await ctx.store().enqueue(newJob(queue, { n: 2 }, { maxAttempts: 2 }));
      await claimAndAbandon(ctx.harness(), queue, "died");
      await claimAndAbandon(ctx.harness(), queue, "died");
      expect(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 10 })).to.deep.equal({ retried: 1, dead: 1 });

      const claims = await claimAll(ctx.store(), queue, "hooks");
      expect(claims.map((claim) => [claim.jobId, claim.attempt, claim.errorCode])).to.deep.equal([[last, 1, "STINT_WORKER_DIED"]]);
      expect(claims[0]!.lastError).to.match(/^The worker died stopped .* during attempt 1 of 1 .* No attempts left\.$/);
      expect((await ctx.store().getJob({ id: again }))!.state).to.equal("failed");
    });

    it("records nothing for successes, retries and cancels", async () => {
      const queue = ctx.freshQueue();
      for (let n = 0; n < 3; n += 1) await ctx.store().enqueue(newJob(queue, { n }));
      const [done, retried, running] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...done!, resultJson: null, durationMs: 1 }] });
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...retried!, delayMs: 60_000, failure: permanent, spendAttempt: true }] });
      expect(await ctx.store().cancelJob({ id: running!.id })).to.equal(true);
      expect(await claimAll(ctx.store(), queue, "hooks")).to.deep.equal([]);
    });

    it("finishes a hook only for the worker that holds its claim", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: permanent }] });
      await claimAll(ctx.store(), queue, "hooks-1");
      expect(await ctx.store().finishDeadHooks({ workerId: "intruder", hooks: [{ id, attempt: 1 }] })).to.deep.equal([]);
      expect(await ctx.store().finishDeadHooks({ workerId: "hooks-1", hooks: [{ id, attempt: 2 }] }), "another death of the job").to.deep.equal([]);
      expect(await ctx.store().finishDeadHooks({ workerId: "hooks-1", hooks: [{ id, attempt: 1 }] })).to.deep.equal([id]);
      expect(await ctx.store().finishDeadHooks({ workerId: "hooks-1", hooks: [{ id, attempt: 1 }] }), "already done").to.deep.equal([]);
      expect(await ctx.store().finishDeadHooks({ workerId: "hooks-1", hooks: [] })).to.deep.equal([]);
    });

    it("hands a lapsed claim to the next claimer as a second delivery, after which the first one's finish misses", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: permanent }] });
      const [first] = await claimAll(ctx.store(), queue, "hooks-1", 1);
      expect(first!.delivery).to.equal(1);
      await ctx.harness().waitUntilPast(new Date(Date.now() + 5));
      const [second] = await claimAll(ctx.store(), queue, "hooks-2");
      expect(second).to.include({ jobId: id, attempt: 1, delivery: 2 });
      expect(await ctx.store().finishDeadHooks({ workerId: "hooks-1", hooks: [{ id, attempt: 1 }] })).to.deep.equal([]);
      expect(await ctx.store().finishDeadHooks({ workerId: "hooks-2", hooks: [{ id, attempt: 1 }] })).to.deep.equal([id]);
      expect(await claimAll(ctx.store(), queue, "hooks-3", 1)).to.deep.equal([]);
    });

    it("keeps each death apart: a job retried after its hook and dead again has a new pending hook", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 1 }));
      const first = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...first, failure: permanent }] });
      await claimAll(ctx.store(), queue, "hooks");
      await ctx.store().finishDeadHooks({ workerId: "hooks", hooks: [{ id, attempt: 1 }] });
      expect(await ctx.store().retryJob({ id })).to.equal(true);
      const second = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...second, failure: { message: "Error: again", code: "STINT_UNKNOWN" } }] });
      const claims = await claimAll(ctx.store(), queue, "hooks");
      expect(claims.map((claim) => [claim.jobId, claim.attempt, claim.delivery, claim.lastError])).to.deep.equal([[id, 2, 1, "Error: again"]]);
    });

    it("claims only the given queue's deaths, and hands over a death whose job is gone without a job", async () => {
      const queue = ctx.freshQueue();
      const other = ctx.freshQueue();
      for (const name of [queue, other]) {
        await ctx.store().enqueue(newJob(name, {}));
        const job = await claimOne(ctx.store(), name, "w");
        await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: permanent }] });
      }
      expect(await ctx.store().deleteFinishedBefore({ states: ["dead"], olderThanMs: 0, limit: 100, queues: [queue] })).to.equal(1);
      const claims = await claimAll(ctx.store(), queue, "hooks");
      expect(claims).to.have.length(1);
      expect(claims[0]!.job).to.equal(undefined);
      expect(await claimAll(ctx.store(), other, "hooks")).to.have.length(1);
    });

    it("never gives one death to two of many racing claimers", async () => {
      const queue = ctx.freshQueue();
      const ids = (await ctx.store().enqueueMany(Array.from({ length: 60 }, (_, n) => newJob(queue, { n })))).map((result) => result.id);
      const jobs = await ctx.store().claimBatch({ queue, workerId: "w", limit: 60, leaseMs: 60_000 });
      await ctx.store().markJobsDead({ workerId: "w", jobs: jobs.map((job) => ({ ...job, failure: permanent })) });
      const claims = await Promise.all(Array.from({ length: 12 }, (_, n) => ctx.store().claimDeadHooks({ queue, workerId: `hooks-${n}`, limit: 8, leaseMs: 60_000 })));
      const claimed = claims.flat().map((claim) => claim.jobId);
      expect(new Set(claimed).size, "no death claimed twice").to.equal(claimed.length);
      const rest = await claimAll(ctx.store(), queue, "late");
      expect([...claimed, ...rest.map((claim) => claim.jobId)].sort()).to.deep.equal([...ids].sort());
    });
  });
}
