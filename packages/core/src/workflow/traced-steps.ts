import type { JsonObject } from "../job/json-types";
import type { NewWorkflowStep } from "../store/workflow-store";

/**
 * `steps`, planned already, with the enqueue's trace context written over
 * each step's meta: what `withContext` (of `traceEnqueue`) adds to a meta,
 * added to every step's job alike. The steps themselves when it adds
 * nothing (no SDK, no active span). The steps are planned, and refused,
 * before the enqueue's span starts; only the context is added inside it,
 * so a workflow of thousands of steps is not built twice.
 *
 * @example
 * ```ts
 * const planned = planWorkflowSteps(steps);
 * await traceEnqueue(name, planned.length, (withContext) => store.enqueueWorkflow({ name, steps: tracedSteps(planned, withContext) }));
 * ```
 */
export function tracedSteps(
  steps: readonly NewWorkflowStep[],
  withContext: (meta: JsonObject | undefined) => JsonObject | undefined,
): readonly NewWorkflowStep[] {
  // The context is the enqueue's, the same for every step: read it once.
  const context = withContext(undefined);
  if (context === undefined) return steps;
  return steps.map((entry) => {
    const meta = entry.job.metaJson == null ? {} : (JSON.parse(entry.job.metaJson) as JsonObject);
    return Object.freeze({ ...entry, job: { ...entry.job, metaJson: JSON.stringify({ ...meta, ...context }) } });
  });
}
