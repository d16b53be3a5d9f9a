import assert from "node:assert/strict";
import { assertFields, assertAbove } from "./conformance-assertions";
import { suite, testCase } from "./test-runner";
import { claimAndAbandon, claimOne, newJob, type ConformanceContext } from "./conformance-harness";

/** Writes after a claim: extendLeases (and the cancels it reports), completeJobs, scheduleRetries, markJobsDead, and their fence. */
export function describeFenceConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("writes after a claim", () => {
    testCase("extends the leases the worker holds and returns their ids", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany([newJob(queue, { n: 1 }), newJob(queue, { n: 2 })]);
      const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 2, leaseMs: 1_000 });
      const before = await ctx.store().getJob({ id: claimed[0]!.id });
      const { extended, cancelled } = await ctx.store().extendLeases({ workerId: "w", leaseMs: 120_000, jobs: claimed });
      assert.deepStrictEqual([...extended].sort(), claimed.map((job) => job.id).sort());
      assert.deepStrictEqual(cancelled, []);
      const after = await ctx.store().getJob({ id: claimed[0]!.id });
      assertAbove(after!.lockedUntil!.getTime() - before!.lockedUntil!.getTime(), 100_000);
      assert.deepStrictEqual(await ctx.store().extendLeases({ workerId: "w", leaseMs: 1_000, jobs: [] }), { extended: [], cancelled: [] });
    });

    testCase("names the attempts an operator cancelled while the worker held them, and extends the others", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany([newJob(queue, { n: 1 }), newJob(queue, { n: 2 })]);
      const [kept, cancelled] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 2, leaseMs: 60_000 });
      assert.equal(await ctx.store().cancelJob({ id: cancelled!.id }), true);
      const renewal = await ctx.store().extendLeases({ workerId: "w", leaseMs: 60_000, jobs: [kept!, cancelled!] });
      assert.deepStrictEqual(renewal, { extended: [kept!.id], cancelled: [cancelled!.id] });
      // Only to the worker that held it, and only for the attempt it held.
      assert.deepStrictEqual(await ctx.store().extendLeases({ workerId: "other", leaseMs: 60_000, jobs: [cancelled!] }), { extended: [], cancelled: [] });
      assert.deepStrictEqual(await ctx.store().extendLeases({ workerId: "w", leaseMs: 60_000, jobs: [{ ...cancelled!, attempt: 2 }] }), {
        extended: [],
        cancelled: [],
      });
      assertFields(await ctx.store().getJob({ id: cancelled!.id }), { state: "cancelled", lockedUntil: null });
    });

    testCase("does not name a job cancelled after the worker lost it to another", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 5 }));
      const stale = await claimAndAbandon(ctx.harness(), queue, "stale");
      await claimOne(ctx.store(), queue, "fresh");
      assert.equal(await ctx.store().cancelJob({ id }), true);
      assert.deepStrictEqual(await ctx.store().extendLeases({ workerId: "stale", leaseMs: 60_000, jobs: [stale] }), { extended: [], cancelled: [] });
    });

    testCase("records a success with its result and duration, keeping the last owner", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      const applied = await ctx.store().completeJobs({
        workerId: "w",
        jobs: [{ id: job.id, attempt: job.attempt, resultJson: '{"sent":[1,2]}', durationMs: 41 }],
      });
      assert.deepStrictEqual(applied, [job.id]);
      const record = await ctx.store().getJob({ id: job.id });
      assertFields(record, { state: "succeeded", durationMs: 41, lockedBy: "w", lockedUntil: null });
      assert.deepStrictEqual(record?.result, { sent: [1, 2] });
      assert.ok(record?.finishedAt instanceof Date);
    });

    testCase("completes a batch and returns only the ids that applied", async () => {
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
      assert.deepStrictEqual([...applied].sort(), [a!.id, c!.id].sort());
      assert.equal((await ctx.store().getJob({ id: b!.id }))?.state, "running");
    });

    testCase("rejects every write of a stale owner after another worker reclaimed the job", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 5 }));
      const stale = await claimAndAbandon(ctx.harness(), queue, "stale");
      const fresh = await claimOne(ctx.store(), queue, "fresh");
      assertFields(fresh, { id, attempt: 2 });
      const failure = { message: "late failure", code: "STINT_TIMEOUT" };

      assert.deepStrictEqual(await ctx.store().extendLeases({ workerId: "stale", leaseMs: 60_000, jobs: [stale] }), { extended: [], cancelled: [] });
      assert.deepStrictEqual(await ctx.store().completeJobs({ workerId: "stale", jobs: [{ ...stale, resultJson: null, durationMs: 1 }] }), []);
      assert.deepStrictEqual(await ctx.store().scheduleRetries({ workerId: "stale", jobs: [{ ...stale, delayMs: 0, failure, spendAttempt: true }] }), []);
      assert.deepStrictEqual(await ctx.store().markJobsDead({ workerId: "stale", jobs: [{ ...stale, failure }] }), []);
      assertFields(await ctx.store().getJob({ id }), { state: "running", lockedBy: "fresh", attempts: 2, lastError: null });

      assert.deepStrictEqual(await ctx.store().completeJobs({ workerId: "fresh", jobs: [{ ...fresh, resultJson: null, durationMs: 1 }] }), [id]);
    });

    testCase("rejects the same worker's write for an older attempt", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 5 }));
      const older = await claimAndAbandon(ctx.harness(), queue, "same");
      const newer = await claimOne(ctx.store(), queue, "same");
      assert.equal(newer.attempt, older.attempt + 1);
      const failure = { message: "old attempt", code: null };
      assert.deepStrictEqual(await ctx.store().extendLeases({ workerId: "same", leaseMs: 60_000, jobs: [older] }), { extended: [], cancelled: [] });
      assert.deepStrictEqual(await ctx.store().markJobsDead({ workerId: "same", jobs: [{ ...older, failure }] }), []);
      assert.deepStrictEqual(await ctx.store().scheduleRetries({ workerId: "same", jobs: [{ ...older, delayMs: 0, failure, spendAttempt: true }] }), []);
      assert.deepStrictEqual(await ctx.store().completeJobs({ workerId: "same", jobs: [{ ...older, resultJson: null, durationMs: 1 }] }), []);
      assertFields(await ctx.store().getJob({ id }), { state: "running", attempts: 2 });
    });

    testCase("schedules a retry after the delay, recording the failure", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 3 }));
      const job = await claimOne(ctx.store(), queue, "w");
      const applied = await ctx.store().scheduleRetries({
        workerId: "w",
        jobs: [{ ...job, delayMs: 3_600_000, failure: { message: "Error: upstream 503", code: "STINT_RETRYABLE" }, spendAttempt: true }],
      });
      assert.deepStrictEqual(applied, [id]);
      const record = await ctx.store().getJob({ id });
      assertFields(record, {
        state: "failed",
        attempts: 1,
        maxAttempts: 3,
        lastError: "Error: upstream 503",
        errorCode: "STINT_RETRYABLE",
        lockedUntil: null,
      });
      assert.equal(record!.runAt.getTime() - record!.updatedAt.getTime(), 3_600_000);
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 }), []);
    });

    testCase("queues the job again without a failure, keeping the last error, and gives the attempt back when spendAttempt is false", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 2 }));
      const first = await claimOne(ctx.store(), queue, "w");
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...first, delayMs: 0, failure: { message: "boom", code: "X" }, spendAttempt: true }] });
      const second = await claimOne(ctx.store(), queue, "w");
      assert.equal(second.attempt, 2);
      const snoozed = await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...second, delayMs: 0, failure: null, spendAttempt: false }] });
      assert.deepStrictEqual(snoozed, [id]);
      assertFields(await ctx.store().getJob({ id }), {
        state: "queued",
        attempts: 2,
        maxAttempts: 3,
        lastError: "boom",
        errorCode: "X",
      });
      const third = await claimOne(ctx.store(), queue, "w");
      assertFields(third, { attempt: 3, maxAttempts: 3 });
    });

    testCase("marks a job dead with its failure", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 10 }));
      const job = await claimOne(ctx.store(), queue, "w");
      const applied = await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: { message: "bad payload", code: "STINT_PARSE" } }] });
      assert.deepStrictEqual(applied, [id]);
      const record = await ctx.store().getJob({ id });
      assertFields(record, { state: "dead", lastError: "bad payload", errorCode: "STINT_PARSE", lockedUntil: null });
      assert.ok(record?.finishedAt instanceof Date);
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 }), []);
    });

    testCase("schedules a batch of retries, snoozes and give-backs in one call, each row as its own", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany([1, 2, 3, 4].map((n) => newJob(queue, { n }, { maxAttempts: 3 })));
      const [failed, snoozed, stale, given] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 4, leaseMs: 60_000 });
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...snoozed!, delayMs: 0, failure: { message: "earlier", code: "E" }, spendAttempt: true }] });
      const [again] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 });
      assertFields(again, { id: snoozed!.id, attempt: 2 });
      const applied = await ctx.store().scheduleRetries({
        workerId: "w",
        jobs: [
          { ...failed!, delayMs: 3_600_000, failure: { message: "upstream 503", code: "STINT_RETRYABLE" }, spendAttempt: true },
          { ...again!, delayMs: 7_200_000, failure: null, spendAttempt: false },
          { ...stale!, attempt: stale!.attempt + 1, delayMs: 0, failure: { message: "not mine", code: null }, spendAttempt: true },
          { ...given!, delayMs: 0, failure: null, spendAttempt: false },
        ],
      });
      assert.deepStrictEqual([...applied].sort(), [failed!.id, snoozed!.id, given!.id].sort());
      const [f, s, st, g] = await Promise.all([failed, snoozed, stale, given].map((job) => ctx.store().getJob({ id: job!.id })));
      assertFields(f, { state: "failed", attempts: 1, maxAttempts: 3, lastError: "upstream 503", errorCode: "STINT_RETRYABLE", lockedUntil: null });
      assert.equal(f!.runAt.getTime() - f!.updatedAt.getTime(), 3_600_000);
      assertFields(s, { state: "queued", attempts: 2, maxAttempts: 4, lastError: "earlier", errorCode: "E", lockedUntil: null });
      assert.equal(s!.runAt.getTime() - s!.updatedAt.getTime(), 7_200_000);
      assertFields(st, { state: "running", attempts: 1, maxAttempts: 3, lastError: null, lockedBy: "w" });
      assertFields(g, { state: "queued", attempts: 1, maxAttempts: 4, lastError: null, lockedUntil: null });
    });

    testCase("writes no retry for another owner or a job that is no longer running", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany([newJob(queue, { n: 1 }), newJob(queue, { n: 2 })]);
      const [mine, cancelled] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 2, leaseMs: 60_000 });
      assert.equal(await ctx.store().cancelJob({ id: cancelled!.id }), true);
      const failure = { message: "late", code: null };
      assert.deepStrictEqual(await ctx.store().scheduleRetries({ workerId: "other", jobs: [{ ...mine!, delayMs: 0, failure, spendAttempt: true }] }), []);
      assert.deepStrictEqual(await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...cancelled!, delayMs: 0, failure, spendAttempt: true }] }), []);
      assert.deepStrictEqual(await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...cancelled!, failure }] }), []);
      assertFields(await ctx.store().getJob({ id: mine!.id }), { state: "running", lockedBy: "w", lastError: null });
      assertFields(await ctx.store().getJob({ id: cancelled!.id }), { state: "cancelled", lastError: null });
    });

    testCase("marks a batch dead, each with its own failure, and only the attempts the worker holds", async () => {
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
      assert.deepStrictEqual([...applied].sort(), [a!.id, c!.id].sort());
      assertFields(await ctx.store().getJob({ id: a!.id }), { state: "dead", lastError: "bad payload", errorCode: "STINT_PARSE" });
      assertFields(await ctx.store().getJob({ id: b!.id }), { state: "running", lastError: null });
      assertFields(await ctx.store().getJob({ id: c!.id }), { state: "dead", lastError: "declined", errorCode: null });
    });

    testCase("writes nothing for an empty batch of retries or dead jobs", async () => {
      assert.deepStrictEqual(await ctx.store().scheduleRetries({ workerId: "w", jobs: [] }), []);
      assert.deepStrictEqual(await ctx.store().markJobsDead({ workerId: "w", jobs: [] }), []);
    });
  });
}
