import assert from "node:assert/strict";
import { assertFields, assertWithin, assertContains } from "./conformance-assertions";
import { suite, testCase } from "./test-runner";
import { MAX_ERROR_MESSAGE, MAX_ERROR_TEXT } from "../../limits";
import { claimAndAbandon, claimOne, newJob, type ConformanceContext } from "./conformance-harness";

const failure = (message: string, summary?: string) => ({ message: `${message}\n    at handler (job.ts:1:1)`, code: "STINT_RETRYABLE", summary });

/** listAttempts and the history every finalize, takeover, cancel and prune keeps with the job. */
export function describeHistoryConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("attempt history", () => {
    testCase("records two failed attempts and the successful one, with their workers, durations and errors", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const first = await claimOne(ctx.store(), queue, "w1");
      await ctx.store().scheduleRetries({
        workerId: "w1",
        jobs: [{ ...first, delayMs: 0, failure: failure("Error: boom 1", "Error: boom 1"), spendAttempt: true, durationMs: 11 }],
      });
      const second = await claimOne(ctx.store(), queue, "w2");
      await ctx.store().scheduleRetries({ workerId: "w2", jobs: [{ ...second, delayMs: 0, failure: failure("Error: boom 2"), spendAttempt: true }] });
      const third = await claimOne(ctx.store(), queue, "w3");
      await ctx.store().completeJobs({ workerId: "w3", jobs: [{ ...third, resultJson: null, durationMs: 33 }] });

      const attempts = await ctx.store().listAttempts({ jobId: id });
      assert.deepStrictEqual(
        attempts.map((a) => [a.attempt, a.outcome, a.workerId]),
        [
          [1, "failed", "w1"],
          [2, "failed", "w2"],
          [3, "succeeded", "w3"],
        ],
      );
      assert.equal(attempts[0]!.durationMs, 11);
      assertWithin(attempts[1]!.durationMs, 0, Infinity); // the database clock's, since no worker figure came
      assert.equal(attempts[2]!.durationMs, 33);
      assert.deepStrictEqual(attempts[0]!.error, { message: "Error: boom 1", code: "STINT_RETRYABLE", stack: "Error: boom 1\n    at handler (job.ts:1:1)" });
      assert.equal(attempts[1]!.error?.message, "Error: boom 2"); // the first line of the stack when no summary came
      assert.equal(attempts[2]!.error, null);
      for (const attempt of attempts) assertWithin(attempt.startedAt!.getTime(), -Infinity, attempt.finishedAt!.getTime());
      const job = await ctx.store().getJob({ id });
      assertFields(job, { state: "succeeded", attempts: 3, lockedBy: "w3", durationMs: 33 });
    });

    testCase("records a dead attempt and gives the job its finish time and duration", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: { message: "PermanentError: no", code: "STINT_PERMANENT" }, durationMs: 7 }] });
      const [attempt] = await ctx.store().listAttempts({ jobId: id });
      assertFields(attempt, { attempt: 1, outcome: "dead", workerId: "w", durationMs: 7 });
      assertFields(await ctx.store().getJob({ id }), { state: "dead", durationMs: 7 });
      assert.ok((await ctx.store().getJob({ id }))!.finishedAt instanceof Date);
    });

    testCase("writes no history for an outcome the fence refused", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      assert.deepStrictEqual(
        await ctx.store().scheduleRetries({ workerId: "intruder", jobs: [{ ...job, delayMs: 0, failure: failure("Error: x"), spendAttempt: true }] }),
        [],
      );
      assert.deepStrictEqual(await ctx.store().markJobsDead({ workerId: "intruder", jobs: [{ ...job, failure: failure("Error: x") }] }), []);
      assert.deepStrictEqual(await ctx.store().listAttempts({ jobId: id }), []);
    });

    testCase("records snoozes and shutdowns as asked, and nothing for an attempt given back before it started", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const back = (job: { id: string; attempt: number }, outcome: "snoozed" | "shutdown" | null) =>
        ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...job, delayMs: 0, failure: null, spendAttempt: false, outcome, durationMs: 5 }] });
      await back(await claimOne(ctx.store(), queue, "w"), "snoozed");
      await back(await claimOne(ctx.store(), queue, "w"), null);
      await back(await claimOne(ctx.store(), queue, "w"), "shutdown");
      const attempts = await ctx.store().listAttempts({ jobId: id });
      assert.deepStrictEqual(
        attempts.map((a) => [a.attempt, a.outcome, a.error]),
        [
          [1, "snoozed", null],
          [3, "shutdown", null],
        ],
      );
    });

    testCase("has the worker that takes over a lapsed lease record the lapsed attempt as lease-lost", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const lapsed = await claimAndAbandon(ctx.harness(), queue, "dead-worker");
      const taken = await claimOne(ctx.store(), queue, "heir");
      assert.equal(taken.attempt, lapsed.attempt + 1);
      const [attempt, ...rest] = await ctx.store().listAttempts({ jobId: id });
      assert.equal(rest.length, 0);
      assertFields(attempt, { attempt: 1, outcome: "lease-lost", workerId: "dead-worker" });
      assert.equal(attempt!.error?.code, "STINT_WORKER_DIED");
      assertContains(attempt!.error?.message, "dead-worker");
      assertContains(attempt!.error?.message, "worker heir took the job over");
    });

    testCase("has the lease rescue record the lapsed attempt as lease-lost", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 1 }));
      await claimAndAbandon(ctx.harness(), queue, "dead-worker");
      assert.deepStrictEqual(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 10 }), { retried: 0, dead: 1 });
      const [attempt] = await ctx.store().listAttempts({ jobId: id });
      assertFields(attempt, { attempt: 1, outcome: "lease-lost", workerId: "dead-worker" });
      assertContains(attempt!.error?.message, "the lease rescue took the job over");
      assert.equal(typeof (await ctx.store().getJob({ id }))!.durationMs, "number");
    });

    testCase("records a cancel of a running job as a cancelled attempt, and none for a job that never ran", async () => {
      const queue = ctx.freshQueue();
      const [running, waiting] = await ctx.store().enqueueMany([newJob(queue, {}, { priority: 1 }), newJob(queue, {})]);
      await claimOne(ctx.store(), queue, "w");
      assert.equal(await ctx.store().cancelJob({ id: running!.id }), true);
      assert.equal(await ctx.store().cancelJob({ id: waiting!.id }), true);
      const [attempt, ...rest] = await ctx.store().listAttempts({ jobId: running!.id });
      assert.equal(rest.length, 0);
      assertFields(attempt, { attempt: 1, outcome: "cancelled", workerId: "w" });
      assert.equal(attempt!.error?.code, "STINT_CANCELLED");
      const cancelled = await ctx.store().getJob({ id: running!.id });
      assert.equal(typeof cancelled!.durationMs, "number");
      assert.ok(cancelled!.finishedAt instanceof Date);
      assert.deepStrictEqual(await ctx.store().listAttempts({ jobId: waiting!.id }), []);
    });

    testCase("cuts error messages and stacks to the documented sizes", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      const long = { message: "s".repeat(MAX_ERROR_TEXT + 500), code: null, summary: "m".repeat(MAX_ERROR_MESSAGE + 500) };
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...job, delayMs: 0, failure: long, spendAttempt: true }] });
      const [attempt] = await ctx.store().listAttempts({ jobId: id });
      assert.equal(attempt!.error!.message?.length, MAX_ERROR_MESSAGE);
      assert.equal(attempt!.error!.stack?.length, MAX_ERROR_TEXT);
    });

    testCase("deletes a pruned job's history with it, and only its", async () => {
      const queue = ctx.freshQueue();
      const [pruned, kept] = await ctx.store().enqueueMany([newJob(queue, {}, { priority: 1 }), newJob(queue, {})]);
      for (const workerId of ["w1", "w2"]) {
        const job = await claimOne(ctx.store(), queue, workerId);
        await ctx.store().markJobsDead({ workerId, jobs: [{ ...job, failure: failure("Error: no") }] });
      }
      assert.equal((await ctx.store().listAttempts({ jobId: pruned!.id })).length, 1);
      await ctx.store().retryJob({ id: kept!.id });
      const dead = await ctx.store().getJob({ id: pruned!.id });
      await ctx.harness().waitUntilPast(new Date(dead!.finishedAt!.getTime() + 1));
      assert.equal(await ctx.store().deleteFinishedBefore({ states: ["dead"], olderThanMs: 0, limit: 100, queues: [queue] }), 1);
      assert.deepStrictEqual(await ctx.store().listAttempts({ jobId: pruned!.id }), []);
      assert.equal((await ctx.store().listAttempts({ jobId: kept!.id })).length, 1);
    });

    testCase("lists nothing for a job that does not exist or an id that cannot be one", async () => {
      assert.deepStrictEqual(await ctx.store().listAttempts({ jobId: "987654321987" }), []);
      assert.deepStrictEqual(await ctx.store().listAttempts({ jobId: "abc" }), []);
    });
  });

  suite("meta and progress", () => {
    testCase("keeps meta from enqueue to claim and getJob, and reads a job without it as {}", async () => {
      const queue = ctx.freshQueue();
      const one = await ctx.store().enqueue(newJob(queue, {}, { priority: 2, metaJson: '{"tenant":"acme"}' }));
      const [many] = await ctx.store().enqueueMany([newJob(queue, {}, { priority: 1, metaJson: '{"traceparent":"00-ab-cd-01"}' })]);
      await ctx.store().enqueue(newJob(queue, {}));
      const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      assert.deepStrictEqual(
        claimed.map((job) => job.meta),
        [{ tenant: "acme" }, { traceparent: "00-ab-cd-01" }, {}],
      );
      assert.deepStrictEqual((await ctx.store().getJob({ id: one.id }))!.meta, { tenant: "acme" });
      assert.deepStrictEqual((await ctx.store().listJobs({ queue, limit: 5 })).find((job) => job.id === many!.id)!.meta, { traceparent: "00-ab-cd-01" });
    });

    testCase("refuses meta that is not an object before anything is written", async () => {
      const queue = ctx.freshQueue();
      const error = await ctx
        .store()
        .enqueue(newJob(queue, {}, { metaJson: "[1]" }))
        .then(
          () => undefined,
          (thrown: unknown) => thrown as Error,
        );
      assert.match(error?.message ?? "", /meta/);
      assert.equal((await ctx.store().listJobs({ queue, limit: 5 })).length, 0);
    });

    testCase("stores the owner's progress and refuses a stale attempt's", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const stale = await claimAndAbandon(ctx.harness(), queue, "w1");
      const current = await claimOne(ctx.store(), queue, "w2");
      assert.equal(await ctx.store().writeProgress({ workerId: "w2", job: current, progressJson: '{"done":4,"of":10}' }), true);
      assert.equal(await ctx.store().writeProgress({ workerId: "w1", job: stale, progressJson: "0.99" }), false);
      assert.equal(await ctx.store().writeProgress({ workerId: "w2", job: stale, progressJson: "0.99" }), false);
      assert.deepStrictEqual((await ctx.store().getJob({ id }))!.progress, { done: 4, of: 10 });
      await ctx.store().completeJobs({ workerId: "w2", jobs: [{ ...current, resultJson: null, durationMs: 1 }] });
      assert.equal(await ctx.store().writeProgress({ workerId: "w2", job: current, progressJson: "1" }), false);
      assert.deepStrictEqual((await ctx.store().getJob({ id }))!.progress, { done: 4, of: 10 });
    });
  });
}
