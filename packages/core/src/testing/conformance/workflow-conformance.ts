import assert from "node:assert/strict";
import { ErrorCode } from "../../errors/error-codes";
import { hasErrorCode } from "../../errors/stint-error";
import type { NewWorkflowStep } from "../../store/workflow-store";
import { assertFields } from "./conformance-assertions";
import type { ConformanceContext } from "./conformance-harness";
import { suite, testCase } from "./test-runner";
import { describeWorkflowFailureConformance } from "./workflow-failure-conformance";
import { describeWorkflowResultsConformance } from "./workflow-results-conformance";
import { stepNames, workflowSteps } from "./workflow-conformance-steps";

/**
 * Workflows: steps that wait for steps (blocked until their dependencies
 * succeeded, then claimed once), fan-out and fan-in, steps added by a
 * running step, the reads, the refusals; failures and retries in
 * {@link describeWorkflowFailureConformance}; the steps' results in
 * {@link describeWorkflowResultsConformance}.
 */
export function describeWorkflowConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  const { step, claimAll, succeed, statesOf, drain } = workflowSteps(ctx);
  const counted = async (queue: string) => (await ctx.store().countByQueue({ queues: [queue] }))[0]?.counts;

  suite("workflows", () => {
    testCase("runs a diamond: the last step is blocked until both steps before it succeeded, then queued and run once", async () => {
      const queue = ctx.freshQueue();
      const other = ctx.freshQueue();
      const { id, jobIds } = await ctx.store().enqueueWorkflow({
        name: "diamond",
        steps: [step(queue, "a"), step(queue, "b", [0]), step(other, "c", [0]), step(queue, "d", [1, 2])],
      });
      const [a, b, c, d] = jobIds as [string, string, string, string];
      assert.deepStrictEqual(await statesOf(jobIds), ["queued", "blocked", "blocked", "blocked"]);
      assertFields(await ctx.store().getJob({ id: d }), { workflowId: id, step: "d", state: "blocked", attempts: 0 });
      assertFields(await counted(queue), { blocked: 2, queued: 1 });
      assertFields((await ctx.store().readQueueGauges({ queues: [queue] }))[0], { blocked: 2, queued: 1, due: 1 });
      assert.deepStrictEqual(
        (await ctx.store().listJobs({ queue, states: ["blocked"], limit: 10 })).map((job) => job.id),
        [d, b],
      );

      const first = await claimAll(queue);
      assert.deepStrictEqual(stepNames(first), ["a"]);
      assert.equal(first[0]!.workflowId, id, "a claimed step names its workflow");
      await succeed(first);
      assert.deepStrictEqual(await statesOf(jobIds), ["succeeded", "queued", "queued", "blocked"]);
      await succeed(await claimAll(queue));
      assert.deepStrictEqual(await statesOf([b, d]), ["succeeded", "blocked"], "d waits for c still");
      assert.deepStrictEqual(await claimAll(queue), []);
      await succeed(await claimAll(other));
      assert.equal((await statesOf([d]))[0], "queued");
      assert.deepStrictEqual(await drain(queue), [d]);
      assert.deepStrictEqual(await claimAll(queue), []);
      assertFields(await ctx.store().getJob({ id: d }), { state: "succeeded", attempts: 1 });
      assert.deepStrictEqual(
        (await ctx.store().readDependencies({ jobId: d })).map((dep) => [dep.jobId, dep.step, dep.state, dep.result]),
        [
          [b, "b", "succeeded", { done: "b" }],
          [c, "c", "succeeded", { done: "c" }],
        ],
      );
      assert.deepStrictEqual(await ctx.store().readDependencies({ jobId: a }), []);
      assertFields(await ctx.store().getWorkflow({ id }), { state: "succeeded", counts: { succeeded: 4 }, stepCount: 4 });
    });

    testCase("fans out to 1,000 steps and in again: the last step is queued by the success of the last of them, finished concurrently", async () => {
      const queue = ctx.freshQueue();
      const width = 1_000;
      const steps: NewWorkflowStep[] = [step(queue, "split")];
      for (let n = 0; n < width; n += 1) steps.push(step(queue, "part", [0]));
      steps.push(
        step(
          queue,
          "join",
          Array.from({ length: width }, (_, n) => n + 1),
        ),
      );
      const { id, jobIds } = await ctx.store().enqueueWorkflow({ name: "fan", steps });
      const join = jobIds[width + 1]!;
      await succeed(await claimAll(queue));
      const parts = await claimAll(queue);
      assert.equal(parts.length, width);
      assert.ok(!parts.some((job) => job.id === join), "the join is not claimed with the parts");
      const last = parts.slice(-1);
      // Ten completions at once, each a tenth: no edge is counted twice, and none is lost.
      const rest = parts.slice(0, -1);
      await Promise.all(Array.from({ length: 10 }, (_, n) => succeed(rest.filter((_, i) => i % 10 === n))));
      assert.equal((await statesOf([join]))[0], "blocked");
      await succeed(last);
      assert.deepStrictEqual(await drain(queue), [join]);
      const deps = await ctx.store().readDependencies({ jobId: join });
      assert.deepStrictEqual(
        deps.map((dep) => dep.jobId),
        jobIds.slice(1, width + 1),
        "in id order",
      );
      assert.ok(deps.every((dep) => dep.state === "succeeded" && dep.step === "part"));
      const workflow = await ctx.store().getWorkflow({ id });
      assertFields(workflow, { state: "succeeded", stepCount: width + 2 });
      assert.equal(workflow?.steps.at(-1)?.after.length, width);
    });

    testCase("adds steps from a running step with its success: the steps waiting for it wait for them too; a lost fence writes nothing", async () => {
      const queue = ctx.freshQueue();
      const { id, jobIds } = await ctx
        .store()
        .enqueueWorkflow({ name: "dynamic", steps: [step(queue, "list"), step(queue, "report", [0], { ignoreFailed: true })] });
      const [list, report] = jobIds as [string, string];
      const [parent] = await claimAll(queue);
      const stale = await ctx
        .harness()
        .withTransaction((trx) => ctx.store().addWorkflowSteps({ workerId: "w2", parent: { id: list, attempt: 1 }, steps: [step(queue, "lost")] }, trx));
      assert.equal(stale, undefined, "another worker's call writes nothing");
      assertFields(await ctx.store().getWorkflow({ id }), { stepCount: 2 });

      let added: readonly string[] | undefined;
      const { applied } = await ctx
        .store()
        .completeInTransaction(
          { workerId: "w1", job: { id: parent!.id, attempt: parent!.attempt }, resultJson: (value) => JSON.stringify(value) },
          async (trx) => {
            added = await ctx
              .store()
              .addWorkflowSteps(
                { workerId: "w1", parent: { id: list, attempt: 1 }, steps: [step(queue, "summarise"), step(queue, "summarise"), step(queue, "check", [0, 1])] },
                trx,
              );
            return { listed: 2 };
          },
        );
      assert.equal(applied, true);
      assert.equal(added?.length, 3);
      const [first, second, check] = added as [string, string, string];
      assert.deepStrictEqual(await statesOf([list, first, second, check, report]), ["succeeded", "queued", "queued", "blocked", "blocked"]);
      const workflow = await ctx.store().getWorkflow({ id });
      assertFields(workflow, { stepCount: 5 });
      assert.deepStrictEqual(
        workflow?.steps.map((entry) => [entry.jobId, entry.step, entry.after, entry.ignoreFailedDependencies]),
        [
          [list, "list", [], false],
          [report, "report", [list, first, second, check], true],
          [first, "summarise", [], false],
          [second, "summarise", [], false],
          [check, "check", [first, second], false],
        ],
      );
      assertFields(await ctx.store().getJob({ id: first }), { workflowId: id, step: "summarise" });
      const summaries = await claimAll(queue);
      assert.deepStrictEqual(stepNames(summaries), ["summarise", "summarise"]);
      await succeed(summaries);
      assert.equal((await statesOf([report]))[0], "blocked", "report waits for check, which the summaries queued");
      assert.deepStrictEqual(await drain(queue), [check, report]);
      assert.deepStrictEqual(
        (await ctx.store().readDependencies({ jobId: report })).map((dep) => [dep.step, dep.state]),
        [
          ["list", "succeeded"],
          ["summarise", "succeeded"],
          ["summarise", "succeeded"],
          ["check", "succeeded"],
        ],
      );
    });

    testCase("never claims a blocked step, whatever its priority, and queues a grouped one into its group when it is unblocked", async () => {
      const queue = ctx.freshQueue();
      const { jobIds } = await ctx.store().enqueueWorkflow({
        name: "grouped",
        steps: [step(queue, "a", [], { job: { groupKey: "g1" } }), step(queue, "b", [0], { job: { groupKey: "g2", priority: 100 } })],
      });
      const [, b] = jobIds as [string, string];
      const [a] = await claimAll(queue);
      assert.equal(a?.id, jobIds[0]);
      for (let n = 0; n < 3; n += 1) assert.deepStrictEqual(await claimAll(queue, `w${n + 2}`), []);
      assert.equal(await ctx.store().runJobNow({ id: b }), false, "a blocked step waits for its dependencies, not for a time");
      assert.equal(await ctx.store().cancelJobs({ queue, states: ["queued", "failed"], limit: 10 }), 0);
      await succeed([a!]);
      assert.deepStrictEqual(await drain(queue), [b]);
    });

    testCase("reads workflows: getWorkflow with every step, listWorkflows newest first with counts and derived states", async () => {
      const queue = ctx.freshQueue();
      const name = `shapes-${queue}`;
      const before = ctx.now();
      const older = await ctx.store().enqueueWorkflow({ name, steps: [step(queue, "only")] });
      const newer = await ctx
        .store()
        .enqueueWorkflow({ name, steps: [step(queue, "a", [], { job: { delayMs: 3_600_000 } }), step(queue, "b", [0], { ignoreFailed: true })] });
      assert.ok(Number(newer.id) > Number(older.id));
      const listed = await ctx.store().listWorkflows({ name, limit: 10 });
      assert.deepStrictEqual(
        listed.map((entry) => [entry.id, entry.name, entry.state, entry.stepCount, entry.counts, entry.finishedAt]),
        [
          [newer.id, name, "running", 2, { queued: 1, blocked: 1 }, null],
          [older.id, name, "running", 1, { queued: 1 }, null],
        ],
      );
      assert.ok(listed[0]!.createdAt.getTime() >= before - 1_000);
      assert.deepStrictEqual(await ctx.store().listWorkflows({ name, limit: 1 }), listed.slice(0, 1));
      assert.deepStrictEqual(await ctx.store().listWorkflows({ name, limit: 10, beforeId: newer.id }), listed.slice(1), "the next page");
      assert.deepStrictEqual(await ctx.store().listWorkflows({ name, limit: 10, beforeId: older.id }), []);
      await drain(queue);
      const [done] = await ctx.store().listWorkflows({ name, state: "succeeded", limit: 10 });
      assertFields(done, { id: older.id, state: "succeeded", counts: { succeeded: 1 } });
      assert.ok(done?.finishedAt instanceof Date);
      assert.deepStrictEqual(
        (await ctx.store().listWorkflows({ name, state: "running", limit: 10 })).map((entry) => entry.id),
        [newer.id],
      );
      assert.deepStrictEqual(await ctx.store().listWorkflows({ name: `none-${queue}`, limit: 10 }), []);

      const workflow = await ctx.store().getWorkflow({ id: newer.id });
      assertFields(workflow, { id: newer.id, name, state: "running", cancelledAt: null, finishedAt: null, stepCount: 2, counts: { queued: 1, blocked: 1 } });
      const [a, b] = workflow!.steps;
      assertFields(a, { jobId: newer.jobIds[0], step: "a", queue, state: "queued", after: [], ignoreFailedDependencies: false, attempts: 0 });
      assertFields(a, { startedAt: null, finishedAt: null, durationMs: null, lastError: null, errorCode: null });
      assert.ok(a!.createdAt instanceof Date);
      assertFields(b, { jobId: newer.jobIds[1], step: "b", state: "blocked", after: [newer.jobIds[0]], ignoreFailedDependencies: true });
      assert.equal(await ctx.store().getWorkflow({ id: "999999999" }), undefined);
      assert.equal(await ctx.store().getWorkflow({ id: "not-a-number" }), undefined);
    });

    testCase("refuses a step with a dedupe key, a position out of range and a cycle before writing anything", async () => {
      const queue = ctx.freshQueue();
      const name = `refused-${queue}`;
      const refusals: [NewWorkflowStep[], ErrorCode][] = [
        [[step(queue, "a", [], { job: { dedupeKey: "k" } })], ErrorCode.WorkflowInvalid],
        [[step(queue, "a"), step(queue, "b", [2])], ErrorCode.WorkflowInvalid],
        [[step(queue, "a"), step(queue, "b", [1])], ErrorCode.WorkflowInvalid],
        [[step(queue, "a", [2]), step(queue, "b", [0]), step(queue, "c", [1])], ErrorCode.WorkflowInvalid],
        [[step(queue, "a"), { ...step(queue, "b"), after: "0" as unknown as number[] }], ErrorCode.Config],
        [[step(queue, "a", [], { job: { groupKey: "k" } }), step(queue, "b", [], { job: { groupKey: "k", serial: "hold" } })], ErrorCode.Config],
      ];
      for (const [steps, code] of refusals) {
        const refused = await ctx
          .store()
          .enqueueWorkflow({ name, steps })
          .then(
            () => undefined,
            (thrown: unknown) => thrown,
          );
        assert.ok(hasErrorCode(refused, code), `${code} for ${JSON.stringify(steps.map((entry) => entry.after))}, got ${String(refused)}`);
      }
      assert.deepStrictEqual(await ctx.store().listWorkflows({ name, limit: 10 }), []);
      assert.deepStrictEqual(
        await ctx
          .store()
          .countByQueue({ queues: [queue] })
          .then((rows) => rows[0]?.counts.queued),
        0,
      );
      assert.equal(await ctx.store().cancelWorkflow({ id: "999999999" }), undefined);
    });

    testCase("writes a workflow with its transaction, and nothing of it when the transaction rolls back", async () => {
      const queue = ctx.freshQueue();
      const name = `tx-${queue}`;
      await ctx
        .harness()
        .withTransaction(async (trx) => {
          await ctx.store().enqueueWorkflow({ name, steps: [step(queue, "a"), step(queue, "b", [0])] }, trx);
          throw new Error("roll back");
        })
        .catch(() => undefined);
      assert.deepStrictEqual(await ctx.store().listWorkflows({ name, limit: 10 }), []);
      const { id } = await ctx.harness().withTransaction((trx) => ctx.store().enqueueWorkflow({ name, steps: [step(queue, "a"), step(queue, "b", [0])] }, trx));
      assertFields(await ctx.store().getWorkflow({ id }), { stepCount: 2, counts: { queued: 1, blocked: 1 } });
    });

    describeWorkflowFailureConformance(ctx);
    describeWorkflowResultsConformance(ctx);
  });
}
