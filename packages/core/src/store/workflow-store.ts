import type { NewJob, StoreTransaction } from "./job-store";
import type { DependencyRecord } from "../workflow/step-dependencies";
import type { WorkflowRecord, WorkflowState, WorkflowSummary } from "../workflow/workflow-record";

/** One step of a workflow to insert: its job, its name and what it waits for. */
export interface NewWorkflowStep {
  /** The step's name; every step of a list shares it. */
  readonly step: string;
  /** The job, with no dedupe key or unique window. */
  readonly job: NewJob;
  /** Positions, in the same list of steps, of the steps it waits for (each smaller or larger, never its own). */
  readonly after: readonly number[];
  readonly ignoreFailedDependencies: boolean;
}

/** A workflow to insert: its name and its steps, checked (no cycle, every position valid). */
export interface NewWorkflow {
  readonly name: string;
  readonly steps: readonly NewWorkflowStep[];
}

/** What `enqueueWorkflow` answers: the workflow's id and each step's job id, in the order of the steps given. */
export interface EnqueuedWorkflowIds {
  readonly id: string;
  readonly jobIds: readonly string[];
}

/** What {@link WorkflowStore.addWorkflowSteps} takes. */
export interface AddWorkflowStepsParams {
  readonly workerId: string;
  /** The running step adding them: they join its workflow, and every step waiting for it waits for them too. */
  readonly parent: { readonly id: string; readonly attempt: number };
  readonly steps: readonly NewWorkflowStep[];
}

/** What {@link WorkflowStore.listWorkflows} takes. */
export interface ListWorkflowsParams {
  /** Only workflows in this state. */
  readonly state?: WorkflowState;
  /** Only workflows of this name. */
  readonly name?: string;
  /** Newest first, at most this many (1 to `MAX_PAGE_SIZE`). */
  readonly limit: number;
  /** Only workflows older than this id: pass the last id of a page for the next one. */
  readonly beforeId?: string;
}

/** What {@link WorkflowStore.readStepResults} takes. */
export interface ReadStepResultsParams {
  /** The workflow the steps belong to. */
  readonly workflowId: string;
  /** The steps' job ids: at most `MAX_WORKFLOW_STEPS` (no workflow holds more). */
  readonly jobIds: readonly string[];
}

/** One row of {@link WorkflowStore.readStepResults}: a step that succeeded and what its handler returned. */
export interface StepResult {
  /** The step's job id. */
  readonly jobId: string;
  /** The handler's return value, or `null` when it returned nothing. */
  readonly result: unknown;
}

/**
 * The calls behind workflows: jobs that wait for jobs. A store keeps, for
 * each step, the steps it waits for; a step whose dependencies have not
 * all succeeded is `blocked` and never claimed. The statement that records
 * a step's success makes the steps waiting only for it claimable, and a
 * step that ends `dead` or `cancelled` cancels the steps waiting for it
 * (those without `ignoreFailedDependencies`, transitively), in the same
 * transaction, however many workers finish steps at once.
 *
 * @example
 * ```ts
 * const { id, jobIds } = await store.enqueueWorkflow({ name: "report", steps });
 * const workflow = await store.getWorkflow({ id });
 * ```
 */
export interface WorkflowStore<Tx = unknown> {
  /** Inserts a workflow and all its steps atomically (in `transaction` when given); nothing is written if anything is refused. */
  enqueueWorkflow(workflow: NewWorkflow, transaction?: Tx): Promise<EnqueuedWorkflowIds>;

  /**
   * Adds steps to the workflow of a running step, inside the transaction
   * that also records that step's success (see `completeInTransaction`):
   * fenced on the worker owning the attempt, they are added only if it
   * still does (`undefined` otherwise). Returns the new steps' job ids.
   */
  addWorkflowSteps(params: AddWorkflowStepsParams, transaction: StoreTransaction): Promise<readonly string[] | undefined>;

  /** The steps job `jobId` waits for, with their states and results, in one read. */
  readDependencies(params: { readonly jobId: string }): Promise<readonly DependencyRecord[]>;

  /**
   * The results of the steps `jobIds` of workflow `workflowId` that
   * succeeded, in one read, in id order: a step that has not succeeded,
   * that is not one of that workflow's, or that retention deleted, has no
   * row. What a wait for the workflow resolves with, however many final
   * steps it has.
   *
   * @example
   * ```ts
   * const rows = await store.readStepResults({ workflowId: "41", jobIds: ["812", "813"] });
   * const byId = new Map(rows.map((row) => [row.jobId, row.result]));
   * ```
   */
  readStepResults(params: ReadStepResultsParams): Promise<readonly StepResult[]>;

  /** A workflow with all its steps, or `undefined` for an unknown id. */
  getWorkflow(params: { readonly id: string }): Promise<WorkflowRecord | undefined>;

  /** Workflows, newest first, with their states and step counts. */
  listWorkflows(params: ListWorkflowsParams): Promise<readonly WorkflowSummary[]>;

  /**
   * Cancels a workflow: its steps still to run are `cancelled`, and its
   * running ones are cancelled as `cancelJob` cancels a running job (their
   * handlers are told to stop). Returns how many steps it cancelled, or
   * `undefined` for an unknown id. A workflow whose steps have all finished
   * is left as it is (0).
   */
  cancelWorkflow(params: { readonly id: string }): Promise<number | undefined>;
}
