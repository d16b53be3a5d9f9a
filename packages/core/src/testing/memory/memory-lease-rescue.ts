import { ErrorCode } from "../../errors/error-codes";
import { recordDeath } from "./memory-dead-hooks";
import { propagateFailure } from "./memory-dependencies";
import { routeDeadLetter } from "./memory-dead-letter";
import { enterGroup, holdLine } from "./memory-groups";
import { durationBetween, recordLapsedAttempt } from "./memory-history";
import type { MemoryState } from "./memory-state";

/**
 * Handles up to `limit` `running` jobs whose lease lapsed, oldest lease
 * first: those with attempts left become `failed`, due now; the others
 * `dead`, with a pending `onDead` hook (and holding its serial line when
 * the line holds on death, and cancelling the workflow steps waiting for
 * it). Both record `STINT_WORKER_DIED`, a
 * `last_error` naming the attempt, and the attempt's `lease-lost` history.
 */
export function rescueExpiredLeases(
  state: MemoryState,
  params: { readonly queues?: readonly string[]; readonly limit: number },
): { readonly retried: number; readonly dead: number } {
  const now = state.now();
  const expired = [...state.jobs.values()]
    .filter((row) => row.state === "running" && row.lockedUntil! < now && (params.queues === undefined || params.queues.includes(row.queue)))
    .sort((a, b) => a.lockedUntil! - b.lockedUntil!)
    .slice(0, params.limit);
  let retried = 0;
  let dead = 0;
  for (const row of expired) {
    recordLapsedAttempt(state, row, "the lease rescue");
    const again = row.attempts < row.maxAttempts;
    const lapsedAt = row.lockedUntil!;
    row.state = again ? "failed" : "dead";
    if (again) row.runAt = now;
    row.finishedAt = again ? null : now;
    if (!again) row.durationMs = durationBetween(row.startedAt, lapsedAt);
    row.errorCode = ErrorCode.WorkerDied;
    row.lastError =
      `The worker ${row.lockedBy ?? "that held the job"} stopped (its process died or lost its database connection) during attempt ` +
      `${row.attempts} of ${row.maxAttempts} without finishing it; its lease expired at ${new Date(lapsedAt).toISOString()}.` +
      (again ? " Retrying." : " No attempts left.");
    row.lockedUntil = null;
    row.updatedAt = now;
    if (again) {
      retried += 1;
      enterGroup(state, row);
    } else {
      dead += 1;
      recordDeath(state, row, now);
      routeDeadLetter(state, row, now);
      holdLine(state, row);
      propagateFailure(state, row, now);
    }
  }
  return Object.freeze({ retried, dead });
}
