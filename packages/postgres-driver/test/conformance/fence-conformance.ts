import { expect } from "chai";
import { claimAndAbandon, claimOne, newJob, type ConformanceContext } from "./conformance-harness";

/** Writes after a claim: extendLeases, completeJobs, scheduleRetries, markJobsDead, and their fence. */
export function describeFenceConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  describe("writes after a claim", () => {
    it("extends the leases the worker holds and returns their ids", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany([newJob(queue, { n: 1 }), newJob(queue, { n: 2 })]);
      const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 2, leaseMs: 1_000 });
      const before = await ctx.store().getJob({ id: claimed[0]!.id });
      const extended = await ctx.store().extendLeases({ workerId: "w", leaseMs: 120_000, jobs: claimed });
      expect([...extended].sort()).to.deep.equal(claimed.map((job) => job.id).sort());
      const after = await ctx.store().getJob({ id: claimed[0]!.id });
      expect(after!.lockedUntil!.getTime() - before!.lockedUntil!.getTime()).to.be.greaterThan(100_000);
      expect(await ctx.store().extendLeases({ workerId: "w", leaseMs: 1_000, jobs: [] })).to.deep.equal([]);
    });

    it("records a success with its result and duration, keeping the last owner", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      const applied = await ctx.store().completeJobs({
        workerId: "w",
        jobs: [{ id: job.id, attempt: job.attempt, resultJson: '{"sent":[1,2]}', durationMs: 41 }],
      });
      expect(applied).to.deep.equal([job.id]);
      const record = await ctx.store().getJob({ id: job.id });
      expect(record).to.include({ state: "succeeded", durationMs: 41, lockedBy: "w", lockedUntil: null });
      expect(record?.result).to.deep.equal({ sent: [1, 2] });
      expect(record?.finishedAt).to.be.instanceOf(Date);
    });

    it("completes a batch and returns only the ids that applied", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany([newJob(queue, { n: 1 }), newJob(queue, { n: 2 }), newJob(queue, { n: 3 })]);
      const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      const [a, b, c] = claimed;
      const applied = await ctx.store().completeJobs({
        workerId: "w",
        jobs: [
          { id: a!.id, attempt: a!.attempt, resultJson: null, durationMs: 1 },
          { id: b!.id, attempt: b!.attempt + 1, resultJson: null, durationMs: 1 },
          { id: c!.id, attempt: c!.attempt, resultJson: "42", durationMs: 1 },
        ],
      });
      expect([...applied].sort()).to.deep.equal([a!.id, c!.id].sort());
      expect((await ctx.store().getJob({ id: b!.id }))?.state).to.equal("running");
    });

    it("rejects every write of a stale owner after another worker reclaimed the job", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 5 }));
      const stale = await claimAndAbandon(ctx.harness(), queue, "stale");
      const fresh = await claimOne(ctx.store(), queue, "fresh");
      expect(fresh).to.include({ id, attempt: 2 });
      const failure = { message: "late failure", code: "STINT_TIMEOUT" };

      expect(await ctx.store().extendLeases({ workerId: "stale", leaseMs: 60_000, jobs: [stale] })).to.deep.equal([]);
      expect(
        await ctx.store().completeJobs({ workerId: "stale", jobs: [{ ...stale, resultJson: null, durationMs: 1 }] }),
      ).to.deep.equal([]);
      expect(
        await ctx.store().scheduleRetries({ workerId: "stale", jobs: [{ ...stale, delayMs: 0, failure, spendAttempt: true }] }),
      ).to.deep.equal([]);
      expect(await ctx.store().markJobsDead({ workerId: "stale", jobs: [{ ...stale, failure }] })).to.deep.equal([]);
      expect(await ctx.store().getJob({ id })).to.include({ state: "running", lockedBy: "fresh", attempts: 2, lastError: null });

      expect(
        await ctx.store().completeJobs({ workerId: "fresh", jobs: [{ ...fresh, resultJson: null, durationMs: 1 }] }),
      ).to.deep.equal([id]);
    });

    it("rejects the same worker's write for an older attempt", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 5 }));
      const older = await claimAndAbandon(ctx.harness(), queue, "same");
      const newer = await claimOne(ctx.store(), queue, "same");
      expect(newer.attempt).to.equal(older.attempt + 1);
      const failure = { message: "old attempt", code: null };
      expect(await ctx.store().extendLeases({ workerId: "same", leaseMs: 60_000, jobs: [older] })).to.deep.equal([]);
      expect(await ctx.store().markJobsDead({ workerId: "same", jobs: [{ ...older, failure }] })).to.deep.equal([]);
      expect(
        await ctx.store().scheduleRetries({ workerId: "same", jobs: [{ ...older, delayMs: 0, failure, spendAttempt: true }] }),
      ).to.deep.equal([]);
      expect(
        await ctx.store().completeJobs({ workerId: "same", jobs: [{ ...older, resultJson: null, durationMs: 1 }] }),
      ).to.deep.equal([]);
      expect(await ctx.store().getJob({ id })).to.include({ state: "running", attempts: 2 });
    });

    it("schedules a retry after the delay, recording the failure", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 3 }));
      const job = await claimOne(ctx.store(), queue, "w");
      const applied = await ctx.store().scheduleRetries({
        workerId: "w",
        jobs: [{ ...job, delayMs: 3_600_000, failure: { message: "Error: upstream 503", code: "STINT_RETRYABLE" }, spendAttempt: true }],
      });
      expect(applied).to.deep.equal([id]);
      const record = await ctx.store().getJob({ id });
      expect(record).to.include({
        state: "failed",
        attempts: 1,
        maxAttempts: 3,
        lastError: "Error: upstream 503",
        errorCode: "STINT_RETRYABLE",
        lockedUntil: null,
      });
      expect(record!.runAt.getTime() - record!.updatedAt.getTime()).to.equal(3_600_000);
      expect(await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 })).to.deep.equal([]);
    });

    it("queues the job again without a failure, keeping the last error, and gives the attempt back when spendAttempt is false", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 2 }));
      const first = await claimOne(ctx.store(), queue, "w");
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...first, delayMs: 0, failure: { message: "boom", code: "X" }, spendAttempt: true }] });
      const second = await claimOne(ctx.store(), queue, "w");
      expect(second.attempt).to.equal(2);
      const snoozed = await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...second, delayMs: 0, failure: null, spendAttempt: false }] });
      expect(snoozed).to.deep.equal([id]);
      expect(await ctx.store().getJob({ id })).to.include({
        state: "queued",
        attempts: 2,
        maxAttempts: 3,
        lastError: "boom",
        errorCode: "X",
      });
      const third = await claimOne(ctx.store(), queue, "w");
      expect(third).to.include({ attempt: 3, maxAttempts: 3 });
    });

    it("marks a job dead with its failure", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 10 }));
      const job = await claimOne(ctx.store(), queue, "w");
      const applied = await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: { message: "bad payload", code: "STINT_PARSE" } }] });
      expect(applied).to.deep.equal([id]);
      const record = await ctx.store().getJob({ id });
      expect(record).to.include({ state: "dead", lastError: "bad payload", errorCode: "STINT_PARSE", lockedUntil: null });
      expect(record?.finishedAt).to.be.instanceOf(Date);
      expect(await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 })).to.deep.equal([]);
    });

    it("schedules a batch of retries, snoozes and give-backs in one call, each row as its own", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany([1, 2, 3, 4].map((n) => newJob(queue, { n }, { maxAttempts: 3 })));
      const [failed, snoozed, stale, given] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 4, leaseMs: 60_000 });
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...snoozed!, delayMs: 0, failure: { message: "earlier", code: "E" }, spendAttempt: true }] });
      const [again] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 });
      expect(again).to.include({ id: snoozed!.id, attempt: 2 });
      const applied = await ctx.store().scheduleRetries({
        workerId: "w",
        jobs: [
          { ...failed!, delayMs: 3_600_000, failure: { message: "upstream 503", code: "STINT_RETRYABLE" }, spendAttempt: true },
          { ...again!, delayMs: 7_200_000, failure: null, spendAttempt: false },
          { ...stale!, attempt: stale!.attempt + 1, delayMs: 0, failure: { message: "not mine", code: null }, spendAttempt: true },
          { ...given!, delayMs: 0, failure: null, spendAttempt: false },
        ],
      });
      expect([...applied].sort()).to.deep.equal([failed!.id, snoozed!.id, given!.id].sort());
      const [f, s, st, g] = await Promise.all([failed, snoozed, stale, given].map((job) => ctx.store().getJob({ id: job!.id })));
      expect(f).to.include({ state: "failed", attempts: 1, maxAttempts: 3, lastError: "upstream 503", errorCode: "STINT_RETRYABLE", lockedUntil: null });
      expect(f!.runAt.getTime() - f!.updatedAt.getTime()).to.equal(3_600_000);
      expect(s).to.include({ state: "queued", attempts: 2, maxAttempts: 4, lastError: "earlier", errorCode: "E", lockedUntil: null });
      expect(s!.runAt.getTime() - s!.updatedAt.getTime()).to.equal(7_200_000);
      expect(st).to.include({ state: "running", attempts: 1, maxAttempts: 3, lastError: null, lockedBy: "w" });
      expect(g).to.include({ state: "queued", attempts: 1, maxAttempts: 4, lastError: null, lockedUntil: null });
    });

    it("writes no retry for another owner or a job that is no longer running", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany([newJob(queue, { n: 1 }), newJob(queue, { n: 2 })]);
      const [mine, cancelled] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 2, leaseMs: 60_000 });
      expect(await ctx.store().cancelJob({ id: cancelled!.id })).to.equal(true);
      const failure = { message: "late", code: null };
      expect(
        await ctx.store().scheduleRetries({ workerId: "other", jobs: [{ ...mine!, delayMs: 0, failure, spendAttempt: true }] }),
      ).to.deep.equal([]);
      expect(
        await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...cancelled!, delayMs: 0, failure, spendAttempt: true }] }),
      ).to.deep.equal([]);
      expect(await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...cancelled!, failure }] })).to.deep.equal([]);
      expect(await ctx.store().getJob({ id: mine!.id })).to.include({ state: "running", lockedBy: "w", lastError: null });
      expect(await ctx.store().getJob({ id: cancelled!.id })).to.include({ state: "cancelled", lastError: null });
    });

    it("marks a batch dead, each with its own failure, and only the attempts the worker holds", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany([1, 2, 3].map((n) => newJob(queue, { n })));
      const [a, b, c] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      const applied = await ctx.store().markJobsDead({
        workerId: "w",
        jobs: [
          { ...a!, failure: { message: "bad payload", code: "STINT_PARSE" } },
          { ...b!, attempt: b!.attempt + 1, failure: { message: "not mine", code: null } },
          { ...c!, failure: { message: "declined", code: null } },
        ],
      });
      expect([...applied].sort()).to.deep.equal([a!.id, c!.id].sort());
      expect(await ctx.store().getJob({ id: a!.id })).to.include({ state: "dead", lastError: "bad payload", errorCode: "STINT_PARSE" });
      expect(await ctx.store().getJob({ id: b!.id })).to.include({ state: "running", lastError: null });
      expect(await ctx.store().getJob({ id: c!.id })).to.include({ state: "dead", lastError: "declined", errorCode: null });
    });

    it("writes nothing for an empty batch of retries or dead jobs", async () => {
      expect(await ctx.store().scheduleRetries({ workerId: "w", jobs: [] })).to.deep.equal([]);
      expect(await ctx.store().markJobsDead({ workerId: "w", jobs: [] })).to.deep.equal([]);
    });
  });
}
