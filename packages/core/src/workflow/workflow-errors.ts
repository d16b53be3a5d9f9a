import { ErrorCode } from "../errors/error-codes";
import { StintError } from "../errors/stint-error";
import type { WorkflowState } from "./workflow-record";

/**
 * A workflow cannot be enqueued as given: a cycle, a step waiting for a
 * name no step has (or for a step of another workflow), a step the kind's
 * options refuse, or more steps or dependencies than stint takes. Nothing
 * was written. `step` names the step at fault.
 *
 * @example
 * ```ts
 * // WorkflowDefinitionError: step "report": waits for "summarize", which no step of the workflow is named
 * err.step;    // "report"
 * err.problem; // "waits for \"summarize\", which no step of the workflow is named"
 * ```
 */
export class WorkflowDefinitionError extends StintError {
  /** The step at fault (the workflow's name when the fault is the whole workflow's). */
  readonly step: string;
  readonly problem: string;

  constructor(step: string, problem: string, options?: { cause?: unknown }) {
    super(ErrorCode.WorkflowInvalid, `step ${JSON.stringify(step)}: ${problem}`, options);
    this.step = step;
    this.problem = problem;
  }
}

/**
 * A workflow someone waited for (`client.waitFor(workflow)`) will not
 * succeed: one of its steps ended `dead` or `cancelled`, or an operator
 * cancelled it. `failedStep` and `failedJobId` name the first step that
 * failed.
 *
 * @example
 * ```ts
 * try { await client.waitFor(workflow); } catch (err) {
 *   if (err instanceof WorkflowFailedError) console.log(err.failedStep, err.state); // "summarise" "failed"
 * }
 * ```
 */
export class WorkflowFailedError extends StintError {
  readonly workflowId: string;
  readonly state: Exclude<WorkflowState, "running" | "succeeded">;
  readonly failedStep: string | null;
  readonly failedJobId: string | null;

  constructor(workflowId: string, state: Exclude<WorkflowState, "running" | "succeeded">, failed: { step: string; jobId: string; reason: string } | null) {
    const why = failed === null ? "" : `: step ${JSON.stringify(failed.step)} (job ${failed.jobId}) ${failed.reason}`;
    super(ErrorCode.WorkflowFailed, `workflow ${workflowId} ${state === "cancelled" ? "was cancelled" : "failed"}${why}`);
    this.workflowId = workflowId;
    this.state = state;
    this.failedStep = failed?.step ?? null;
    this.failedJobId = failed?.jobId ?? null;
  }
}

/**
 * The workflow named does not exist (never did, or retention deleted it).
 *
 * @example
 * ```ts
 * await admin.getWorkflow("999"); // undefined; client.waitFor("999") rejects with WorkflowNotFoundError
 * ```
 */
export class WorkflowNotFoundError extends StintError {
  readonly workflowId: string;

  constructor(workflowId: string) {
    super(ErrorCode.WorkflowNotFound, `workflow ${workflowId} does not exist (never did, or retention deleted it)`);
    this.workflowId = workflowId;
  }
}
