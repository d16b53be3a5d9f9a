import { MAX_ERROR_MESSAGE, MAX_ERROR_TEXT } from "@stint/core/driver";
import { expect } from "chai";
import { claimAndAbandon, claimOne, newJob, type ConformanceContext } from "./conformance-harness";

const failure = (message: string, summary?: string) => ({ message: `${message}\n    at handler (job.ts:1:1)`, code: "STINT_RETRYABLE", summary });

/** listAttempts and the history every finalize, takeover, cancel and prune keeps with the job. */
export function describeHistoryConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  describe("attempt history", () => {
    it("records two failed attempts and the successful one, with their workers, durations and errors", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const first = await claimOne(ctx.store(), queue, "w1");
      await ctx.store().scheduleRetries({ workerId: "w1", jobs: [{ ...first, delayMs: 0, failure: failure("Error: boom 1", "Error: boom 1"), spendAttempt: true, durationMs: 11 }] });
      const second = await claimOne(ctx.store(), queue, "w2");
      await ctx.store().scheduleRetries({ workerId: "w2", jobs: [{ ...second, delayMs: 0, failure: failure("Error: boom 2"), spendAttempt: true }] });
      const third = await claimOne(ctx.store(), queue, "w3");
      await ctx.store().completeJobs({ workerId: "w3", jobs: [{ ...third, resultJson: null, durationMs: 33 }] });

      const attempts = await ctx.store().listAttempts({ jobId: id });
      expect(attempts.map((a) => [a.attempt, a.outcome, a.workerId])).to.deep.equal([
        [1, "failed", "w1"],
        [2, "failed", "w2"],
        [3, "succeeded", "w3"],
      ]);
      expect(attempts[0]!.durationMs).to.equal(11);
      expect(attempts[1]!.durationMs).to.be.a("number").and.at.least(0); // the database clock's, since no worker figure came
      expect(attempts[2]!.durationMs).to.equal(33);
      expect(attempts[0]!.error).to.deep.equal({ message: "Error: boom 1", code: "STINT_RETRYABLE", stack: "Error: boom 1\n    at handler (job.ts:1:1)" });
      expect(attempts[1]!.error?.message).to.equal("Error: boom 2"); // the first line of the stack when no summary came
      expect(attempts[2]!.error).to.equal(null);
      for (const attempt of attempts) expect(attempt.startedAt!.getTime()).to.be.at.most(attempt.finishedAt!.getTime());
      const job = await ctx.store().getJob({ id });
      expect(job).to.include({ state: "succeeded", attempts: 3, lockedBy: "w3", durationMs: 33 });
    });

    it("records a dead attempt and gives the job its finish time and duration", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      await ctx.store().markJobsDead({ workerId: "w", jobs: [{ ...job, failure: { message: "PermanentError: no", code: "STINT_PERMANENT" }, durationMs: 7 }] });
      const [attempt] = await ctx.store().listAttempts({ jobId: id });
      expect(attempt).to.include({ attempt: 1, outcome: "dead", workerId: "w", durationMs: 7 });
      expect(await ctx.store().getJob({ id })).to.include({ state: "dead", durationMs: 7 });
      expect((await ctx.store().getJob({ id }))!.finishedAt).to.be.instanceOf(Date);
    });

    it("writes no history for an outcome the fence refused", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      expect(await ctx.store().scheduleRetries({ workerId: "intruder", jobs: [{ ...job, delayMs: 0, failure: failure("Error: x"), spendAttempt: true }] })).to.deep.equal([]);
      expect(await ctx.store().markJobsDead({ workerId: "intruder", jobs: [{ ...job, failure: failure("Error: x") }] })).to.deep.equal([]);
      expect(await ctx.store().listAttempts({ jobId: id })).to.deep.equal([]);
    });

    it("records snoozes and shutdowns as asked, and nothing for an attempt given back before it started", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const back = (job: { id: string; attempt: number }, outcome: "snoozed" | "shutdown" | null) =>
        ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...job, delayMs: 0, failure: null, spendAttempt: false, outcome, durationMs: 5 }] });
      await back(await claimOne(ctx.store(), queue, "w"), "snoozed");
      await back(await claimOne(ctx.store(), queue, "w"), null);
      await back(await claimOne(ctx.store(), queue, "w"), "shutdown");
      const attempts = await ctx.store().listAttempts({ jobId: id });
      expect(attempts.map((a) => [a.attempt, a.outcome, a.error])).to.deep.equal([
        [1, "snoozed", null],
        [3, "shutdown", null],
      ]);
    });

    it("has the worker that takes over a lapsed lease record the lapsed attempt as lease-lost", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const lapsed = await claimAndAbandon(ctx.harness(), queue, "dead-worker");
      const taken = await claimOne(ctx.store(), queue, "heir");
      expect(taken.attempt).to.equal(lapsed.attempt + 1);
      const [attempt, ...rest] = await ctx.store().listAttempts({ jobId: id });
      expect(rest).to.have.length(0);
      expect(attempt).to.include({ attempt: 1, outcome: "lease-lost", workerId: "dead-worker" });
      expect(attempt!.error?.code).to.equal("STINT_WORKER_DIED");
      expect(attempt!.error?.message).to.include("dead-worker").and.include("worker heir took the job over");
    });

    it("has the lease rescue record the lapsed attempt as lease-lost", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 1 }));
      await claimAndAbandon(ctx.harness(), queue, "dead-worker");
      expect(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 10 })).to.deep.equal({ retried: 0, dead: 1 });
      const [attempt] = await ctx.store().listAttempts({ jobId: id });
      expect(attempt).to.include({ attempt: 1, outcome: "lease-lost", workerId: "dead-worker" });
      expect(attempt!.error?.message).to.include("the lease rescue took the job over");
      expect((await ctx.store().getJob({ id }))!.durationMs).to.be.a("number");
    });

    it("records a cancel of a running job as a cancelled attempt, and none for a job that never ran", async () => {
      const queue = ctx.freshQueue();
      const [running, waiting] = await ctx.store().enqueueMany([newJob(queue, {}, { priority: 1 }), newJob(queue, {})]);
      await claimOne(ctx.store(), queue, "w");
      expect(await ctx.store().cancelJob({ id: running!.id })).to.equal(true);
      expect(await ctx.store().cancelJob({ id: waiting!.id })).to.equal(true);
      const [attempt, ...rest] = await ctx.store().listAttempts({ jobId: running!.id });
      expect(rest).to.have.length(0);
      expect(attempt).to.include({ attempt: 1, outcome: "cancelled", workerId: "w" });
      expect(attempt!.error?.code).to.equal("STINT_CANCELLED");
      const cancelled = await ctx.store().getJob({ id: running!.id });
      expect(cancelled!.durationMs).to.be.a("number");
      expect(cancelled!.finishedAt).to.be.instanceOf(Date);
      expect(await ctx.store().listAttempts({ jobId: waiting!.id })).to.deep.equal([]);
    });

    it("cuts error messages and stacks to the documented sizes", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const job = await claimOne(ctx.store(), queue, "w");
      const long = { message: "s".repeat(MAX_ERROR_TEXT + 500), code: null, summary: "m".repeat(MAX_ERROR_MESSAGE + 500) };
      await ctx.store().scheduleRetries({ workerId: "w", jobs: [{ ...job, delayMs: 0, failure: long, spendAttempt: true }] });
      const [attempt] = await ctx.store().listAttempts({ jobId: id });
      expect(attempt!.error!.message).to.have.length(MAX_ERROR_MESSAGE);
      expect(attempt!.error!.stack).to.have.length(MAX_ERROR_TEXT);
    });

    it("deletes a pruned job's history with it, and only its", async () => {
      const queue = ctx.freshQueue();
      const [pruned, kept] = await ctx.store().enqueueMany([newJob(queue, {}, { priority: 1 }), newJob(queue, {})]);
      for (const workerId of ["w1", "w2"]) {
        const job = await claimOne(ctx.store(), queue, workerId);
        await ctx.store().markJobsDead({ workerId, jobs: [{ ...job, failure: failure("Error: no") }] });
      }
      expect(await ctx.store().listAttempts({ jobId: pruned!.id })).to.have.length(1);
      await ctx.store().retryJob({ id: kept!.id });
      const dead = await ctx.store().getJob({ id: pruned!.id });
      await ctx.harness().waitUntilPast(new Date(dead!.finishedAt!.getTime() + 1));
      expect(await ctx.store().deleteFinishedBefore({ states: ["dead"], olderThanMs: 0, limit: 100, queues: [queue] })).to.equal(1);
      expect(await ctx.store().listAttempts({ jobId: pruned!.id })).to.deep.equal([]);
      expect(await ctx.store().listAttempts({ jobId: kept!.id })).to.have.length(1);
    });

    it("lists nothing for a job that does not exist or an id that cannot be one", async () => {
      expect(await ctx.store().listAttempts({ jobId: "987654321987" })).to.deep.equal([]);
      expect(await ctx.store().listAttempts({ jobId: "abc" })).to.deep.equal([]);
    });
  });

  describe("meta and progress", () => {
    it("keeps meta from enqueue to claim and getJob, and reads a job without it as {}", async () => {
      const queue = ctx.freshQueue();
      const one = await ctx.store().enqueue(newJob(queue, {}, { priority: 2, metaJson: '{"tenant":"acme"}' }));
      const [many] = await ctx.store().enqueueMany([newJob(queue, {}, { priority: 1, metaJson: '{"traceparent":"00-ab-cd-01"}' })]);
      await ctx.store().enqueue(newJob(queue, {}));
      const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      expect(claimed.map((job) => job.meta)).to.deep.equal([{ tenant: "acme" }, { traceparent: "00-ab-cd-01" }, {}]);
      expect((await ctx.store().getJob({ id: one.id }))!.meta).to.deep.equal({ tenant: "acme" });
      expect((await ctx.store().listJobs({ queue, limit: 5 })).find((job) => job.id === many!.id)!.meta).to.deep.equal({ traceparent: "00-ab-cd-01" });
    });

    it("refuses meta that is not an object before anything is written", async () => {
      const queue = ctx.freshQueue();
      const error = await ctx.store().enqueue(newJob(queue, {}, { metaJson: "[1]" })).then(() => undefined, (thrown: Error) => thrown);
      expect(error?.message).to.match(/meta/);
      expect(await ctx.store().listJobs({ queue, limit: 5 })).to.have.length(0);
    });

    it("stores the owner's progress and refuses a stale attempt's", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}));
      const stale = await claimAndAbandon(ctx.harness(), queue, "w1");
      const current = await claimOne(ctx.store(), queue, "w2");
      expect(await ctx.store().writeProgress({ workerId: "w2", job: current, progressJson: '{"done":4,"of":10}' })).to.equal(true);
      expect(await ctx.store().writeProgress({ workerId: "w1", job: stale, progressJson: "0.99" })).to.equal(false);
      expect(await ctx.store().writeProgress({ workerId: "w2", job: stale, progressJson: "0.99" })).to.equal(false);
      expect((await ctx.store().getJob({ id }))!.progress).to.deep.equal({ done: 4, of: 10 });
      await ctx.store().completeJobs({ workerId: "w2", jobs: [{ ...current, resultJson: null, durationMs: 1 }] });
      expect(await ctx.store().writeProgress({ workerId: "w2", job: current, progressJson: "1" })).to.equal(false);
      expect((await ctx.store().getJob({ id }))!.progress).to.deep.equal({ done: 4, of: 10 });
    });
  });
}
