import { ErrorCode } from "../../errors/error-codes";
import { propagateFailure } from "./memory-dependencies";
import { isWaiting } from "./memory-rows";
import type { MemoryState } from "./memory-state";

/**
 * Cancels up to `limit` waiting jobs whose start-by deadline has passed,
 * oldest deadline first, with `STINT_EXPIRED` and a `last_error` naming
 * the deadline (a workflow step's cancel cancelling the steps waiting for
 * it); returns how many. A `blocked` step is not swept: its deadline is
 * looked at once it is queued.
 */
export function cancelExpiredJobs(state: MemoryState, params: { readonly queues?: readonly string[]; readonly limit: number }): number {
  const now = state.now();
  const expired = [...state.jobs.values()]
    .filter((row) => isWaiting(row.state) && row.startBy !== null && row.startBy <= now && (params.queues === undefined || params.queues.includes(row.queue)))
    .sort((a, b) => a.startBy! - b.startBy! || a.seq - b.seq)
    .slice(0, params.limit);
  for (const row of expired) {
    row.state = "cancelled";
    row.errorCode = ErrorCode.Expired;
    row.lastError = expiredError(row.startBy!);
    row.finishedAt = now;
    row.lockedUntil = null;
    row.updatedAt = now;
    propagateFailure(state, row, now);
  }
  return expired.length;
}

/** The `last_error` of an expired job (the PostgreSQL store writes the same text). */
function expiredError(startBy: number): string {
  return `Not started by ${new Date(startBy).toISOString()}, its start-by deadline: cancelled without running.`;
}

/** Forgets up to `limit` unique windows that have closed (of `queues`, when given); returns how many. */
export function deleteClosedWindows(state: MemoryState, params: { readonly queues?: readonly string[]; readonly limit: number }): number {
  const now = state.now();
  const closed = [...state.uniqueWindows.entries()]
    .filter(([, window]) => window.until <= now && (params.queues === undefined || params.queues.includes(window.queue)))
    .sort(([, a], [, b]) => a.until - b.until)
    .slice(0, params.limit);
  for (const [key] of closed) state.uniqueWindows.delete(key);
  return closed.length;
}
