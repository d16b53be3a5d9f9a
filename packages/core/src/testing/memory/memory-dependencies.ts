import { ErrorCode } from "../../errors/error-codes";
import { enterGroup } from "./memory-groups";
import type { MemoryJobRow } from "./memory-rows";
import type { MemoryState } from "./memory-state";
import type { MemoryEdge } from "./memory-workflow-rows";

/*
 * What the end of a workflow step does to the steps waiting for it, in the
 * same operation as the write that ends it (as the PostgreSQL store does in
 * the statement that records the end): a success settles its edges, a death
 * or cancel cancels the blocked steps that do not ignore failures, and a
 * retry makes the steps it cancelled wait again.
 */

/** Settles `edge`: its dependent waits for one edge fewer, and a blocked one waiting for none is queued (due at its `run_at`, in its group). */
function settle(state: MemoryState, edge: MemoryEdge, now: number): void {
  edge.settled = true;
  const dependent = state.jobs.get(edge.dependent);
  if (dependent === undefined) return;
  dependent.waitingOn -= 1;
  if (dependent.waitingOn === 0 && dependent.state === "blocked") {
    dependent.state = "queued";
    dependent.updatedAt = now;
    enterGroup(state, dependent);
  }
}

/** After `row` succeeded: each edge out of it not yet settled is settled (once: a settled edge is never counted again). */
export function settleSucceeded(state: MemoryState, row: MemoryJobRow, now: number): void {
  for (const edge of state.edgesFrom.get(row.id) ?? []) if (!edge.settled) settle(state, edge, now);
}

/** The `last_error` of a step cancelled because `root` ended dead or cancelled (the PostgreSQL store writes the same text). */
export function dependencyFailedError(root: MemoryJobRow): string {
  return `cancelled: step ${JSON.stringify(root.step)} (job ${root.id}) that it waits for is ${root.state}`;
}

/**
 * After `root` ended `dead` or `cancelled`: a dependent that ignores failed
 * dependencies has its edge settled (and runs once it waits for nothing);
 * a `blocked` one that does not is cancelled with `STINT_DEPENDENCY_FAILED`
 * and a reason naming `root`, and so on through the steps waiting for it.
 */
export function propagateFailure(state: MemoryState, root: MemoryJobRow, now: number): void {
  if (root.workflowId === null) return;
  const reason = dependencyFailedError(root);
  const ended = [root];
  for (let next = ended.pop(); next !== undefined; next = ended.pop()) {
    for (const edge of state.edgesFrom.get(next.id) ?? []) {
      if (edge.settled) continue;
      if (edge.ignoreFailed) {
        settle(state, edge, now);
        continue;
      }
      const dependent = state.jobs.get(edge.dependent);
      if (dependent?.state !== "blocked") continue;
      dependent.state = "cancelled";
      dependent.errorCode = ErrorCode.DependencyFailed;
      dependent.lastError = reason;
      dependent.finishedAt = now;
      dependent.lockedUntil = null;
      dependent.updatedAt = now;
      ended.push(dependent);
    }
  }
}

/** How many edges into step `id` are not settled. */
function unsettledInto(state: MemoryState, id: string): number {
  return (state.edgesInto.get(id) ?? []).filter((edge) => !edge.settled && state.jobs.has(edge.dependency)).length;
}

/**
 * After `row`, a step, was put back to run (`queued`, by a retry): it waits
 * for the edges into it not yet settled (`blocked` while there are some),
 * and every step that a failure cancelled through edges from it, not
 * ignoring failures, transitively, is `blocked` again, waiting as it then
 * does. Call before putting `row` back into its group.
 */
export function reopenStep(state: MemoryState, row: MemoryJobRow, now: number): void {
  if (row.workflowId === null) return;
  row.waitingOn = unsettledInto(state, row.id);
  if (row.waitingOn > 0) row.state = "blocked";
  const reopened = [row];
  for (let next = reopened.pop(); next !== undefined; next = reopened.pop()) {
    for (const edge of state.edgesFrom.get(next.id) ?? []) {
      if (edge.settled || edge.ignoreFailed) continue;
      const dependent = state.jobs.get(edge.dependent);
      if (dependent?.state !== "cancelled" || dependent.errorCode !== ErrorCode.DependencyFailed) continue;
      dependent.state = "blocked";
      dependent.waitingOn = unsettledInto(state, dependent.id);
      dependent.runAt = now;
      dependent.startBy = null;
      dependent.finishedAt = null;
      dependent.lockedUntil = null;
      dependent.updatedAt = now;
      reopened.push(dependent);
    }
  }
}
