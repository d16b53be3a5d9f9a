import type { WorkflowRecord, WorkflowStepRecord, WorkflowSummary } from "@stint/core";
import { isoTime } from "./time-text";

/** A workflow as `stint workflows list --json` prints it: times in ISO 8601, counts by step state. */
export function workflowSummaryJson(workflow: WorkflowSummary): Record<string, unknown> {
  return {
    id: workflow.id,
    name: workflow.name,
    state: workflow.state,
    stepCount: workflow.stepCount,
    counts: workflow.counts,
    createdAt: isoTime(workflow.createdAt),
    finishedAt: isoTime(workflow.finishedAt),
  };
}

/** A workflow with every step, each with its layer (see `stepLayers`), as `stint workflows show --json` prints it. */
export function workflowJson(workflow: WorkflowRecord, layers: ReadonlyMap<string, number>): Record<string, unknown> {
  return {
    ...workflowSummaryJson(workflow),
    cancelledAt: isoTime(workflow.cancelledAt),
    steps: workflow.steps.map((step) => stepJson(step, layers.get(step.jobId) ?? 0)),
  };
}

function stepJson(step: WorkflowStepRecord, layer: number): Record<string, unknown> {
  return {
    jobId: step.jobId,
    step: step.step,
    layer,
    queue: step.queue,
    state: step.state,
    after: step.after,
    ignoreFailedDependencies: step.ignoreFailedDependencies,
    attempts: step.attempts,
    createdAt: isoTime(step.createdAt),
    startedAt: isoTime(step.startedAt),
    finishedAt: isoTime(step.finishedAt),
    durationMs: step.durationMs,
    errorCode: step.errorCode,
    lastError: step.lastError,
  };
}
