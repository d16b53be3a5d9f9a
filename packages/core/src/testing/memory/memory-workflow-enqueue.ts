import { ConfigError } from "../../errors/config-errors";
import { MAX_WORKFLOW_STEPS } from "../../limits";
import type { AddWorkflowStepsParams, EnqueuedWorkflowIds, NewWorkflow, NewWorkflowStep } from "../../store/workflow-store";
import { WorkflowDefinitionError } from "../../workflow/workflow-errors";
import { checkPayloadText } from "./memory-enqueue";
import { heldAttempt } from "./memory-finalize";
import { checkGroupKeys, insertJob } from "./memory-groups";
import { newJobRow, type MemoryJobRow } from "./memory-rows";
import type { MemoryState } from "./memory-state";
import { givenTransaction, type MemoryTransaction } from "./memory-transaction";
import type { MemoryEdge, MemoryWorkflowRow } from "./memory-workflow-rows";

/** The rows of a list of steps, ready to write: each step's job and the edges among them. */
interface PlannedSteps {
  readonly rows: readonly MemoryJobRow[];
  readonly edges: readonly MemoryEdge[];
}

/**
 * Builds the rows of `steps` for workflow `workflowId`, ids taken now (as a
 * sequence gives them, in input order): a step waiting for others is
 * `blocked`, waiting for each distinct position once; the others `queued`.
 * Refuses, before anything is built, payload text that is not JSON and a
 * key used as a group and as a serial key.
 */
function planSteps(state: MemoryState, workflowId: string, steps: readonly NewWorkflowStep[], now: number): PlannedSteps {
  for (const entry of steps) checkPayloadText(entry.job);
  checkGroupKeys(
    state,
    steps.map((entry) => entry.job),
  );
  const rows = steps.map((entry): MemoryJobRow => {
    const waitingOn = new Set(entry.after).size;
    return {
      ...newJobRow(state.nextId(), entry.job, now),
      state: waitingOn > 0 ? "blocked" : "queued",
      workflowId,
      step: entry.step,
      ignoreFailedDependencies: entry.ignoreFailedDependencies,
      waitingOn,
    };
  });
  const edges = steps.flatMap((entry, index) =>
    [...new Set(entry.after)]
      .sort((a, b) => a - b)
      .map((position): MemoryEdge => ({
        dependent: rows[index]!.id,
        dependency: rows[position]!.id,
        ignoreFailed: entry.ignoreFailedDependencies,
        settled: false,
      })),
  );
  return { rows, edges };
}

/** Writes planned steps into `workflow`: the jobs (a queued one in its group) and their edges. */
function writeSteps(state: MemoryState, workflow: MemoryWorkflowRow, planned: PlannedSteps): void {
  for (const row of planned.rows) {
    insertJob(state, row);
    workflow.stepIds.push(row.id);
  }
  for (const edge of planned.edges) state.addEdge(edge);
}

/** Makes `write` now, or when `transaction` commits. */
function writeWith(transaction: MemoryTransaction | undefined, write: () => void): void {
  if (transaction === undefined) write();
  else transaction.onCommit(write);
}

/**
 * Inserts a workflow, its steps and their edges, all at once (when
 * `transaction` commits, when given). Ids are taken at the call, the
 * workflow's from a sequence of its own. Returns the job ids in the order
 * of the steps.
 */
export function enqueueWorkflow(state: MemoryState, workflow: NewWorkflow, transaction: unknown): EnqueuedWorkflowIds {
  const given = givenTransaction(transaction);
  const now = state.now();
  const seq = state.nextWorkflowId();
  const row: MemoryWorkflowRow = { id: String(seq), seq, name: workflow.name, createdAt: now, cancelledAt: null, stepIds: [] };
  const planned = planSteps(state, row.id, workflow.steps, now);
  writeWith(given, () => {
    state.workflows.set(row.id, row);
    writeSteps(state, row, planned);
  });
  return Object.freeze({ id: row.id, jobIds: Object.freeze(planned.rows.map((step) => step.id)) });
}

/**
 * Adds steps to the workflow of the running step `params.parent`, fenced
 * on its worker and attempt (`undefined`, nothing written, when the worker
 * no longer holds it), when `transaction` commits. Each step waiting for
 * the parent waits for every new step too (ignoring failures as it does
 * for the parent); a queued one among them is blocked again. Refuses more
 * than `MAX_WORKFLOW_STEPS` steps in the workflow with a
 * `WorkflowDefinitionError`.
 */
export function addWorkflowSteps(state: MemoryState, params: AddWorkflowStepsParams, transaction: unknown): readonly string[] | undefined {
  const given = givenTransaction(transaction);
  const parent = heldAttempt(state, params.workerId, params.parent);
  if (parent === undefined) return undefined;
  const workflow = parent.workflowId === null ? undefined : state.workflows.get(parent.workflowId);
  if (workflow === undefined) throw new ConfigError("parent", `job ${parent.id} is not a workflow step: only a step adds steps to its workflow`);
  if (workflow.stepIds.length + params.steps.length > MAX_WORKFLOW_STEPS) {
    throw new WorkflowDefinitionError(workflow.name, `a workflow holds at most ${MAX_WORKFLOW_STEPS} steps, counting the ones its steps add`);
  }
  const planned = planSteps(state, workflow.id, params.steps, state.now());
  writeWith(given, () => {
    writeSteps(state, workflow, planned);
    for (const edge of [...(state.edgesFrom.get(parent.id) ?? [])]) {
      for (const row of planned.rows) state.addEdge({ dependent: edge.dependent, dependency: row.id, ignoreFailed: edge.ignoreFailed, settled: false });
      const dependent = state.jobs.get(edge.dependent);
      if (dependent === undefined) continue;
      dependent.waitingOn += planned.rows.length;
      // A step that has not started and now waits for something is blocked, whatever let it be queued.
      if (dependent.state === "queued") dependent.state = "blocked";
    }
  });
  return Object.freeze(planned.rows.map((row) => row.id));
}
