import { ErrorCode } from "../../errors/error-codes";
import { propagateFailure } from "./memory-dependencies";
import { cancel } from "./memory-operator-calls";
import { isUnfinished } from "./memory-rows";
import type { MemoryState } from "./memory-state";
import { workflowRows } from "./memory-workflow-reads";

/** The `last_error` of a step cancelled with its workflow (the PostgreSQL store writes the same text). */
export const WORKFLOW_CANCELLED_ERROR = "the workflow was cancelled";

/**
 * Cancels workflow `id`: records when (the first time), and cancels every
 * step that has not finished: a waiting one with `STINT_CANCELLED` and
 * "the workflow was cancelled", a running one as `cancelJob` cancels it
 * (its attempt's history says so; its worker hears at its next lease
 * extension; its error fields are left as they were). All are cancelled before any failure is
 * passed on, so none is told a dependency failed; the steps ignoring
 * failures have their edges settled. Returns how many it cancelled, or
 * `undefined` for an unknown id (or one whose every step retention deleted).
 */
export function cancelWorkflow(state: MemoryState, params: { readonly id: string }): number | undefined {
  const found = workflowRows(state, params.id);
  if (found === undefined) return undefined;
  const cancelled = found.steps.filter((row) => isUnfinished(row.state)).sort((a, b) => a.seq - b.seq);
  // A workflow whose steps have all finished keeps the state they gave it.
  if (cancelled.length === 0) return 0;
  const now = state.now();
  found.workflow.cancelledAt ??= now;
  for (const row of cancelled) {
    // A running step is cancelled exactly as cancelJob cancels it: its attempt's history says why, its error fields are its own.
    if (row.state !== "running") {
      row.errorCode = ErrorCode.Cancelled;
      row.lastError = WORKFLOW_CANCELLED_ERROR;
    }
    cancel(state, row, now);
  }
  for (const row of cancelled) propagateFailure(state, row, now);
  return cancelled.length;
}
