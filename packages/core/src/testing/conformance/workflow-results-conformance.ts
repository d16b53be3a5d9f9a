import assert from "node:assert/strict";
import { ErrorCode } from "../../errors/error-codes";
import { hasErrorCode } from "../../errors/stint-error";
import { MAX_WORKFLOW_STEPS } from "../../limits";
import type { NewWorkflowStep } from "../../store/workflow-store";
import type { ConformanceContext } from "./conformance-harness";
import { suite, testCase } from "./test-runner";
import { workflowSteps } from "./workflow-conformance-steps";

/** `readStepResults`: the results of many steps of a workflow, read in one call. */
export function describeWorkflowResultsConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  const { step, claimAll, succeed, kill, drain } = workflowSteps(ctx);
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );

  suite("workflow step results", () => {
    testCase("reads the results of a workflow's succeeded steps in id order; a step not succeeded, another workflow's or an unknown id has none", async () => {
      const queue = ctx.freshQueue();
      const width = 500;
      const steps: NewWorkflowStep[] = [step(queue, "split")];
      for (let n = 0; n < width; n += 1) steps.push(step(queue, "part", [0]));
      const { id, jobIds } = await ctx.store().enqueueWorkflow({ name: "results", steps });
      const other = await ctx.store().enqueueWorkflow({ name: "results", steps: [step(queue, "elsewhere")] });
      assert.deepStrictEqual(await ctx.store().readStepResults({ workflowId: id, jobIds }), [], "nothing has succeeded yet");
      assert.equal((await succeed(await claimAll(queue))).length, 2, "split and the other workflow's step");
      const parts = await claimAll(queue);
      const [dying, silent, running, ...rest] = parts;
      await kill(dying!);
      await ctx.store().completeJobs({ workerId: "w1", jobs: [{ id: silent!.id, attempt: silent!.attempt, resultJson: null, durationMs: 1 }] });
      await succeed(rest);
      await drain(queue);

      const asked = [...jobIds, other.jobIds[0]!, "999999999", "not-a-number"].reverse();
      const rows = await ctx.store().readStepResults({ workflowId: id, jobIds: asked });
      const expected = jobIds
        .filter((jobId) => jobId !== dying!.id && jobId !== running!.id)
        .map((jobId) => ({
          jobId,
          result: jobId === jobIds[0] ? { done: "split" } : jobId === silent!.id ? null : { done: "part" },
        }));
      assert.deepStrictEqual(rows, expected);
      assert.deepStrictEqual(await ctx.store().readStepResults({ workflowId: other.id, jobIds: asked }), [
        { jobId: other.jobIds[0], result: { done: "elsewhere" } },
      ]);
      assert.deepStrictEqual(await ctx.store().readStepResults({ workflowId: "999999999", jobIds }), []);
      assert.deepStrictEqual(await ctx.store().readStepResults({ workflowId: id, jobIds: [] }), []);
    });

    testCase("refuses more job ids than a workflow holds, and an id that is not a string, before reading", async () => {
      const tooMany = Array.from({ length: MAX_WORKFLOW_STEPS + 1 }, (_, n) => String(n + 1));
      for (const params of [
        { workflowId: "1", jobIds: tooMany },
        { workflowId: "1", jobIds: [""] },
        { workflowId: "", jobIds: ["1"] },
        { workflowId: "1", jobIds: "1" as unknown as string[] },
      ]) {
        const refused = await refusal(ctx.store().readStepResults(params));
        assert.ok(hasErrorCode(refused, ErrorCode.Config), `refused ${JSON.stringify(params).slice(0, 80)}, got ${String(refused)}`);
      }
    });
  });
}
