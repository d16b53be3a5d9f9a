import type { JobState } from "../../job/job-state";
import type { ListWorkflowsParams, ReadStepResultsParams, StepResult } from "../../store/workflow-store";
import type { DependencyRecord } from "../../workflow/step-dependencies";
import { workflowState, type WorkflowRecord, type WorkflowStepRecord, type WorkflowSummary } from "../../workflow/workflow-record";
import { jobKey, parsedJson, type MemoryJobRow } from "./memory-rows";
import type { MemoryState } from "./memory-state";
import type { MemoryWorkflowRow } from "./memory-workflow-rows";

/** The jobs that job `id` waits for, in id order (one deleted by retention is left out). */
function dependenciesOf(state: MemoryState, id: string): MemoryJobRow[] {
  return (state.edgesInto.get(id) ?? [])
    .map((edge) => state.jobs.get(edge.dependency))
    .filter((row): row is MemoryJobRow => row !== undefined)
    .sort((a, b) => a.seq - b.seq);
}

/** What job `jobId` waits for, with states and results (a result only for a succeeded one); none for a job that is not a step. */
export function readDependencies(state: MemoryState, params: { readonly jobId: string }): readonly DependencyRecord[] {
  const key = jobKey(params.jobId);
  if (key === undefined) return Object.freeze([]);
  return Object.freeze(
    dependenciesOf(state, key).map((row) =>
      Object.freeze({
        jobId: row.id,
        step: row.step ?? "",
        queue: row.queue,
        state: row.state,
        payload: JSON.parse(row.payloadJson) as unknown,
        result: row.state === "succeeded" ? parsedJson(row.resultJson) : null,
        lastError: row.lastError,
      }),
    ),
  );
}

/** The results of the steps of `params.jobIds` that belong to workflow `params.workflowId` and succeeded, in id order. */
export function readStepResults(state: MemoryState, params: ReadStepResultsParams): readonly StepResult[] {
  const workflowId = jobKey(params.workflowId);
  const rows = new Set<MemoryJobRow>();
  if (workflowId === undefined) return Object.freeze([]);
  for (const jobId of params.jobIds) {
    const key = jobKey(jobId);
    const row = key === undefined ? undefined : state.jobs.get(key);
    if (row?.workflowId === workflowId && row.state === "succeeded") rows.add(row);
  }
  return Object.freeze([...rows].sort((a, b) => a.seq - b.seq).map((row) => Object.freeze({ jobId: row.id, result: parsedJson(row.resultJson) })));
}

/**
 * The workflow of id `id` and its steps still stored, or `undefined` for
 * an unknown id; a workflow whose every step retention deleted is
 * forgotten (as the PostgreSQL store deletes it with its last step).
 */
export function workflowRows(state: MemoryState, id: string): { workflow: MemoryWorkflowRow; steps: MemoryJobRow[] } | undefined {
  const key = jobKey(id);
  const workflow = key === undefined ? undefined : state.workflows.get(key);
  if (workflow === undefined) return undefined;
  const steps = workflow.stepIds.map((stepId) => state.jobs.get(stepId)).filter((row): row is MemoryJobRow => row !== undefined);
  if (steps.length === 0) {
    state.workflows.delete(workflow.id);
    return undefined;
  }
  return { workflow, steps };
}

/** A workflow at a glance: counts per state (non-zero ones), its derived state, and when its last step finished once nothing runs. */
function summaryOf(workflow: MemoryWorkflowRow, steps: readonly MemoryJobRow[]): WorkflowSummary {
  const counts: Partial<Record<JobState, number>> = {};
  let finishedAt: number | null = null;
  for (const row of steps) {
    counts[row.state] = (counts[row.state] ?? 0) + 1;
    if (row.finishedAt !== null && (finishedAt === null || row.finishedAt > finishedAt)) finishedAt = row.finishedAt;
  }
  const derived = workflowState(counts, workflow.cancelledAt !== null);
  return {
    id: workflow.id,
    name: workflow.name,
    state: derived,
    createdAt: new Date(workflow.createdAt),
    finishedAt: derived === "running" || finishedAt === null ? null : new Date(finishedAt),
    counts: Object.freeze(counts),
    stepCount: steps.length,
  };
}

function stepRecord(state: MemoryState, row: MemoryJobRow): WorkflowStepRecord {
  return Object.freeze({
    jobId: row.id,
    step: row.step ?? "",
    queue: row.queue,
    state: row.state,
    after: Object.freeze(dependenciesOf(state, row.id).map((dependency) => dependency.id)),
    ignoreFailedDependencies: row.ignoreFailedDependencies,
    attempts: row.attempts,
    createdAt: new Date(row.createdAt),
    startedAt: row.startedAt === null ? null : new Date(row.startedAt),
    finishedAt: row.finishedAt === null ? null : new Date(row.finishedAt),
    durationMs: row.durationMs,
    lastError: row.lastError,
    errorCode: row.errorCode,
  });
}

/** A workflow with every step in id order, or `undefined`. */
export function getWorkflow(state: MemoryState, params: { readonly id: string }): WorkflowRecord | undefined {
  const found = workflowRows(state, params.id);
  if (found === undefined) return undefined;
  const { workflow, steps } = found;
  return Object.freeze({
    ...summaryOf(workflow, steps),
    cancelledAt: workflow.cancelledAt === null ? null : new Date(workflow.cancelledAt),
    steps: Object.freeze(steps.sort((a, b) => a.seq - b.seq).map((row) => stepRecord(state, row))),
  });
}

/** Workflows newest first (by id), of one name and one derived state when asked, at most `limit`. */
export function listWorkflows(state: MemoryState, params: ListWorkflowsParams): readonly WorkflowSummary[] {
  const listed: WorkflowSummary[] = [];
  for (const workflow of [...state.workflows.values()].sort((a, b) => b.seq - a.seq)) {
    if (listed.length >= params.limit) break;
    if (params.name !== undefined && workflow.name !== params.name) continue;
    if (params.beforeId !== undefined && workflow.seq >= Number(params.beforeId)) continue;
    const found = workflowRows(state, workflow.id);
    if (found === undefined) continue;
    const summary = summaryOf(found.workflow, found.steps);
    if (params.state === undefined || summary.state === params.state) listed.push(Object.freeze(summary));
  }
  return Object.freeze(listed);
}
