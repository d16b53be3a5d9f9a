import assert from "node:assert/strict";
import { ErrorCode } from "../../errors/error-codes";
import { assertFields } from "./conformance-assertions";
import { claimOne, waitForLeaseExpiry, type ConformanceContext } from "./conformance-harness";
import { suite, testCase } from "./test-runner";
import { workflowSteps } from "./workflow-conformance-steps";

/** The reason a step cancelled because of `root` gives. */
function becauseOf(step: string, jobId: string, state: "dead" | "cancelled"): string {
  return `cancelled: step "${step}" (job ${jobId}) that it waits for is ${state}`;
}

/** Workflow steps that end dead or cancelled, on every path; cancelWorkflow; retries that resume a workflow. */
export function describeWorkflowFailureConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  const { step, claimAll, kill, statesOf, drain } = workflowSteps(ctx);
  const once = { job: { maxAttempts: 1 } };
  /** A chain a -> b -> c in `queue`, `a` with one attempt. */
  const chain = async (queue: string) => {
    const { id, jobIds } = await ctx
      .store()
      .enqueueWorkflow({ name: "chain", steps: [step(queue, "a", [], once), step(queue, "b", [0]), step(queue, "c", [1])] });
    return { id, ids: jobIds as [string, string, string] };
  };
  /** The chain with `a` dead. */
  const brokenChain = async (queue: string) => {
    const made = await chain(queue);
    await kill(await claimOne(ctx.store(), queue, "w1"));
    return made;
  };
  const failureOf = async (id: string) => {
    const job = await ctx.store().getJob({ id });
    return [job?.state, job?.errorCode, job?.lastError];
  };

  suite("workflow failures", () => {
    testCase("cancels the blocked steps after a dead step, transitively, naming it; the steps ignoring failures run and read it", async () => {
      const queue = ctx.freshQueue();
      const { id, jobIds } = await ctx.store().enqueueWorkflow({
        name: "failing",
        steps: [
          step(queue, "a", [], once),
          step(queue, "b", [0]),
          step(queue, "c", [1]),
          step(queue, "d", [0], { ignoreFailed: true }),
          step(queue, "e", [2], { ignoreFailed: true }),
          step(queue, "f", [4]),
        ],
      });
      const [a, b, c, d, e, f] = jobIds as [string, string, string, string, string, string];
      await kill(await claimOne(ctx.store(), queue, "w1"));
      const reason = becauseOf("a", a, "dead");
      assert.deepStrictEqual(await failureOf(b), ["cancelled", ErrorCode.DependencyFailed, reason]);
      assert.deepStrictEqual(await failureOf(c), ["cancelled", ErrorCode.DependencyFailed, reason], "the root step is named, not the one between");
      assert.deepStrictEqual(await statesOf([d, e, f]), ["queued", "queued", "blocked"]);
      assert.deepStrictEqual(await ctx.store().readDependencies({ jobId: d }), [
        { jobId: a, step: "a", queue, state: "dead", payload: { step: "a" }, result: null, lastError: "Error: broken" },
      ]);
      assert.deepStrictEqual(await ctx.store().readDependencies({ jobId: e }), [
        { jobId: c, step: "c", queue, state: "cancelled", payload: { step: "c" }, result: null, lastError: reason },
      ]);
      assertFields(await ctx.store().getWorkflow({ id }), { state: "running", counts: { dead: 1, cancelled: 2, queued: 2, blocked: 1 } });
      assert.deepStrictEqual((await drain(queue)).sort(), [d, e, f].sort());
      assertFields(await ctx.store().getWorkflow({ id }), { state: "failed", counts: { dead: 1, cancelled: 2, succeeded: 3 } });
    });

    testCase("passes on a cancel by every path: cancelJob (blocked or running), cancelJobs, the lease rescue and the expiry sweep", async () => {
      const blockedQueue = ctx.freshQueue();
      const blocked = await chain(blockedQueue);
      assert.equal(await ctx.store().cancelJob({ id: blocked.ids[1] }), true, "a blocked step can be cancelled");
      assert.deepStrictEqual(await failureOf(blocked.ids[2]), ["cancelled", ErrorCode.DependencyFailed, becauseOf("b", blocked.ids[1], "cancelled")]);
      assert.deepStrictEqual(await statesOf([blocked.ids[0]]), ["queued"]);

      const runningQueue = ctx.freshQueue();
      const running = await chain(runningQueue);
      await claimOne(ctx.store(), runningQueue, "w1");
      assert.equal(await ctx.store().cancelJob({ id: running.ids[0] }), true);
      assert.deepStrictEqual(await statesOf(running.ids), ["cancelled", "cancelled", "cancelled"]);
      assert.equal((await ctx.store().getJob({ id: running.ids[2] }))?.lastError, becauseOf("a", running.ids[0], "cancelled"));

      const bulkQueue = ctx.freshQueue();
      const bulk = await chain(bulkQueue);
      assert.equal(await ctx.store().cancelJobs({ queue: bulkQueue, states: ["queued"], limit: 10 }), 1);
      assert.deepStrictEqual(await statesOf(bulk.ids), ["cancelled", "cancelled", "cancelled"]);

      const rescueQueue = ctx.freshQueue();
      const rescued = await chain(rescueQueue);
      const lapsed = await claimOne(ctx.store(), rescueQueue, "w1", 1);
      await waitForLeaseExpiry(ctx.harness(), [lapsed.id]);
      assertFields(await ctx.store().rescueExpiredLeases({ queues: [rescueQueue], limit: 10 }), { dead: 1 });
      assert.deepStrictEqual(await failureOf(rescued.ids[1]), ["cancelled", ErrorCode.DependencyFailed, becauseOf("a", rescued.ids[0], "dead")]);

      const expiryQueue = ctx.freshQueue();
      const startBy = new Date(ctx.now() + 50);
      const { jobIds } = await ctx.store().enqueueWorkflow({
        name: "expiring",
        steps: [step(expiryQueue, "a", [], { job: { startBy } }), step(expiryQueue, "b", [0])],
      });
      await ctx.harness().waitUntilPast(startBy);
      assert.equal(await ctx.store().cancelExpiredJobs({ queues: [expiryQueue], limit: 10 }), 1);
      assert.deepStrictEqual(await failureOf(jobIds[1]!), ["cancelled", ErrorCode.DependencyFailed, becauseOf("a", jobIds[0]!, "cancelled")]);
    });

    testCase("cancels a workflow: its waiting steps, and a running one as cancelJob does; it derives to cancelled", async () => {
      const queue = ctx.freshQueue();
      const other = ctx.freshQueue();
      const { id, jobIds } = await ctx.store().enqueueWorkflow({ name: "doomed", steps: [step(queue, "a"), step(queue, "b", [0]), step(other, "c")] });
      const [a, b, c] = jobIds as [string, string, string];
      const claimed = await claimOne(ctx.store(), queue, "w1");
      assert.equal(await ctx.store().cancelWorkflow({ id }), 3);
      for (const jobId of [b, c]) assert.deepStrictEqual(await failureOf(jobId), ["cancelled", ErrorCode.Cancelled, "the workflow was cancelled"]);
      assert.deepStrictEqual(await failureOf(a), ["cancelled", null, null], "the running step is cancelled as cancelJob cancels it");
      assert.deepStrictEqual(
        (await ctx.store().extendLeases({ workerId: "w1", leaseMs: 60_000, jobs: [claimed] })).cancelled,
        [a],
        "its worker is told to stop",
      );
      assert.deepStrictEqual(
        await ctx.store().completeJobs({ workerId: "w1", jobs: [{ id: a, attempt: 1, resultJson: null, durationMs: 1 }] }),
        [],
        "the fence refuses its outcome",
      );
      assert.equal((await ctx.store().listAttempts({ jobId: a })).at(-1)?.outcome, "cancelled");
      const workflow = await ctx.store().getWorkflow({ id });
      assertFields(workflow, { state: "cancelled", counts: { cancelled: 3 } });
      assert.ok(workflow?.cancelledAt instanceof Date);
      assert.equal(await ctx.store().cancelWorkflow({ id }), 0);
      assert.deepStrictEqual((await ctx.store().getWorkflow({ id }))?.cancelledAt, workflow?.cancelledAt, "the first cancel's time is kept");
      assert.deepStrictEqual(await claimAll(other), []);
    });

    testCase("leaves a finished workflow as its steps left it: a cancel afterwards changes nothing", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueueWorkflow({ name: "done", steps: [step(queue, "a"), step(queue, "b", [0])] });
      await drain(queue);
      assert.equal(await ctx.store().cancelWorkflow({ id }), 0);
      const workflow = await ctx.store().getWorkflow({ id });
      assertFields(workflow, { state: "succeeded", counts: { succeeded: 2 } });
      assert.equal(workflow?.cancelledAt, null);
      const failed = await brokenChain(queue);
      assert.equal(await ctx.store().cancelWorkflow({ id: failed.id }), 0);
      assertFields(await ctx.store().getWorkflow({ id: failed.id }), { state: "failed" });
    });

    testCase("resumes a workflow when its dead step is retried: the steps it cancelled wait for it again, then run", async () => {
      const queue = ctx.freshQueue();
      const { id, ids } = await brokenChain(queue);
      assert.deepStrictEqual(await statesOf(ids), ["dead", "cancelled", "cancelled"]);
      assertFields(await ctx.store().getWorkflow({ id }), { state: "failed" });
      assert.equal(await ctx.store().retryJob({ id: ids[0] }), true);
      assert.deepStrictEqual(await statesOf(ids), ["queued", "blocked", "blocked"]);
      assertFields(await ctx.store().getWorkflow({ id }), { state: "running" });
      assert.deepStrictEqual(await drain(queue), ids);
      assertFields(await ctx.store().getWorkflow({ id }), { state: "succeeded" });

      const bulkQueue = ctx.freshQueue();
      const bulk = await brokenChain(bulkQueue);
      assert.equal(await ctx.store().retryDeadJobs({ queue: bulkQueue, limit: 10 }), 1);
      assert.deepStrictEqual(await statesOf(bulk.ids), ["queued", "blocked", "blocked"]);
      assert.deepStrictEqual(await drain(bulkQueue), bulk.ids);
    });

    testCase("leaves a retried step blocked while the step it waits for is still dead", async () => {
      const queue = ctx.freshQueue();
      const { id, ids } = await brokenChain(queue);
      assert.equal(await ctx.store().retryJob({ id: ids[1] }), true);
      assert.deepStrictEqual(await statesOf(ids), ["dead", "blocked", "blocked"]);
      assert.deepStrictEqual(await claimAll(queue), []);
      assertFields(await ctx.store().getWorkflow({ id }), { state: "running" });
      assert.equal(await ctx.store().retryJob({ id: ids[0] }), true);
      assert.deepStrictEqual(await drain(queue), ids);
      assertFields(await ctx.store().getWorkflow({ id }), { state: "succeeded", counts: { succeeded: 3 } });
    });
  });
}
