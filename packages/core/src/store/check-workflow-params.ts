import { ConfigError } from "../errors/config-errors";
import { MAX_PAGE_SIZE, MAX_STEP_DEPENDENCIES, MAX_WORKFLOW_STEPS } from "../limits";
import { integerOption } from "../validation/option-checks";
import { assertWorkflowName } from "../workflow/plan-workflow";
import { WorkflowDefinitionError } from "../workflow/workflow-errors";
import { checkNewJob } from "./check-new-job";
import { checkJobAttempt, checkJobId, checkWorkerId } from "./check-store-params";
import type { AddWorkflowStepsParams, ListWorkflowsParams, NewWorkflow, NewWorkflowStep, ReadStepResultsParams } from "./workflow-store";

const WORKFLOW_STATES = ["running", "succeeded", "failed", "cancelled"];

/** `enqueueWorkflow`'s check: a valid name, and every step's job and positions (see {@link checkWorkflowSteps}). */
export function checkNewWorkflow(workflow: NewWorkflow, maxPayloadBytes: number): void {
  if (typeof workflow !== "object" || workflow === null) throw new ConfigError("workflow", "must be { name, steps }");
  assertWorkflowName(workflow.name);
  if (!Array.isArray(workflow.steps) || workflow.steps.length === 0) throw new WorkflowDefinitionError(workflow.name, "a workflow needs at least one step");
  checkWorkflowSteps(workflow.steps, maxPayloadBytes);
}

/** `addWorkflowSteps`'s check: the worker's fence and the steps. */
export function checkAddWorkflowSteps(params: AddWorkflowStepsParams, maxPayloadBytes: number): void {
  checkWorkerId(params.workerId);
  checkJobAttempt("parent", params.parent);
  if (!Array.isArray(params.steps) || params.steps.length === 0) throw new ConfigError("steps", "must be a non-empty array of steps");
  checkWorkflowSteps(params.steps, maxPayloadBytes);
}

/**
 * Each step: a name, a job as `enqueue` takes it but without a dedupe key
 * or unique window, and `after` positions within the list, none its own;
 * the list acyclic (a step only ever waits for positions a topological
 * order puts first). At most `MAX_WORKFLOW_STEPS` steps and
 * `MAX_STEP_DEPENDENCIES` dependencies per step.
 */
function checkWorkflowSteps(steps: readonly NewWorkflowStep[], maxPayloadBytes: number): void {
  if (steps.length > MAX_WORKFLOW_STEPS) throw new ConfigError("steps", `a workflow holds at most ${MAX_WORKFLOW_STEPS} steps, got ${steps.length}`);
  const waiting = new Array<number>(steps.length).fill(0);
  const waitedBy: number[][] = steps.map(() => []);
  steps.forEach((entry, index) => {
    if (typeof entry !== "object" || entry === null || typeof entry.step !== "string" || entry.step === "") {
      throw new ConfigError(`steps[${index}]`, "must be { step, job, after, ignoreFailedDependencies }");
    }
    checkNewJob(entry.job, maxPayloadBytes);
    if (entry.job.dedupeKey !== null || entry.job.unique != null) throw new WorkflowDefinitionError(entry.step, "a step takes no dedupe key or unique window");
    if (typeof entry.ignoreFailedDependencies !== "boolean") throw new ConfigError(`steps[${index}].ignoreFailedDependencies`, "must be true or false");
    if (!Array.isArray(entry.after) || entry.after.length > MAX_STEP_DEPENDENCIES) {
      throw new ConfigError(`steps[${index}].after`, `must be an array of at most ${MAX_STEP_DEPENDENCIES} positions`);
    }
    for (const other of new Set<number>(entry.after)) {
      if (!Number.isInteger(other) || other < 0 || other >= steps.length || other === index) {
        throw new WorkflowDefinitionError(entry.step, `waits for position ${String(other)}, which is not another step of the list`);
      }
      waiting[index]! += 1;
      waitedBy[other]!.push(index);
    }
  });
  const ready = waiting.flatMap((count, index) => (count === 0 ? [index] : []));
  let taken = 0;
  for (let next = ready.pop(); next !== undefined; next = ready.pop()) {
    taken += 1;
    for (const waiter of waitedBy[next]!) if ((waiting[waiter]! -= 1) === 0) ready.push(waiter);
  }
  if (taken < steps.length) {
    const stuck = steps[waiting.findIndex((count) => count > 0)]!;
    throw new WorkflowDefinitionError(stuck.step, "waits, directly or not, for itself");
  }
}

/** A workflow id: a non-empty string (a store answers "not found" to one it never issued). */
export function checkWorkflowIdParams(params: { readonly id: string }): void {
  if (typeof params !== "object" || params === null) throw new ConfigError("params", "must be { id }");
  if (typeof params.id !== "string" || params.id === "") throw new ConfigError("id", "must be a workflow id (a non-empty string)");
}

export function checkReadDependencies(params: { readonly jobId: string }): void {
  checkJobId("jobId", params.jobId);
}

/** A workflow id, and at most `MAX_WORKFLOW_STEPS` job ids (no workflow holds more steps, so the read stays bounded). */
export function checkReadStepResults(params: ReadStepResultsParams): void {
  if (typeof params !== "object" || params === null) throw new ConfigError("params", "must be { workflowId, jobIds }");
  if (typeof params.workflowId !== "string" || params.workflowId === "") throw new ConfigError("workflowId", "must be a workflow id (a non-empty string)");
  if (!Array.isArray(params.jobIds) || params.jobIds.length > MAX_WORKFLOW_STEPS) {
    throw new ConfigError("jobIds", `must be an array of at most ${MAX_WORKFLOW_STEPS} job ids`);
  }
  params.jobIds.forEach((jobId, index) => checkJobId(`jobIds[${index}]`, jobId));
}

export function checkListWorkflows(params: ListWorkflowsParams): void {
  integerOption("limit", params.limit, 1, MAX_PAGE_SIZE);
  if (params.state !== undefined && !WORKFLOW_STATES.includes(params.state)) {
    throw new ConfigError("state", `must be one of ${WORKFLOW_STATES.join(", ")}, got ${JSON.stringify(params.state)}`);
  }
  if (params.name !== undefined) assertWorkflowName(params.name);
  if (params.beforeId !== undefined) checkJobId("beforeId", params.beforeId);
}
