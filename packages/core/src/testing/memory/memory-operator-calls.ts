import { ErrorCode } from "../../errors/error-codes";
import { DatabaseError } from "../../errors/infrastructure-error";
import { propagateFailure, reopenStep } from "./memory-dependencies";
import { checkGroupKeys, reenterGroup } from "./memory-groups";
import { durationBetween } from "./memory-history";
import { inClaimOrder, isUnfinished, isWaiting, jobKey, type MemoryJobRow } from "./memory-rows";
import { keyOf, type MemoryState } from "./memory-state";

/**
 * Cancels a job that has not finished: `cancelled`, finished now, lease
 * cleared. The fence refuses a running attempt's outcome, and its worker
 * hears of the cancel at its next `extendLeases`; the attempt gets a
 * `cancelled` history record and the job its duration. A workflow step's
 * cancel (a `blocked` one's too) cancels the steps waiting for it (see
 * `propagateFailure`). False when the job does not exist or has finished.
 */
export function cancelJob(state: MemoryState, id: string): boolean {
  const key = jobKey(id);
  const row = key === undefined ? undefined : state.jobs.get(key);
  if (row === undefined || !isUnfinished(row.state)) return false;
  const now = state.now();
  cancel(state, row, now);
  propagateFailure(state, row, now);
  return true;
}

/**
 * Cancels up to `limit` jobs of `queue` in `states` (`queued`, `failed`),
 * as {@link cancelJob} would, in the PostgreSQL store's order (jobs without
 * a group first, then group by group, each in claim order); returns how many.
 */
export function cancelJobs(state: MemoryState, params: { readonly queue: string; readonly states: readonly string[]; readonly limit: number }): number {
  const picked = [...state.rowsOf(params.queue)]
    .filter((row) => isWaiting(row.state) && params.states.includes(row.state))
    .sort((a, b) => (a.groupKey < b.groupKey ? -1 : a.groupKey > b.groupKey ? 1 : inClaimOrder(a, b)))
    .slice(0, params.limit);
  const now = state.now();
  for (const row of picked) {
    cancel(state, row, now);
    propagateFailure(state, row, now);
  }
  return picked.length;
}

/** `cancelled`, finished now, lease cleared (the owner kept); a running attempt's history says so. */
export function cancel(state: MemoryState, row: MemoryJobRow, now: number): void {
  if (row.state === "running") {
    row.durationMs = durationBetween(row.startedAt, now);
    state.recordAttempt({
      jobId: row.id,
      attempt: row.attempts,
      outcome: "cancelled",
      workerId: row.lockedBy,
      startedAt: row.startedAt,
      finishedAt: now,
      durationMs: row.durationMs,
      errorMessage: "Cancelled while it ran; its handler was told to stop",
      errorCode: ErrorCode.Cancelled,
      errorStack: null,
    });
  }
  row.state = "cancelled";
  row.finishedAt = now;
  row.lockedUntil = null;
  row.updatedAt = now;
}

/**
 * Runs a `dead`, `cancelled` or `failed` job again now with a fresh attempt
 * budget. False when the job does not exist or is in another state; a
 * `DatabaseError` (SQLSTATE 23505, as PostgreSQL's unique violation) naming
 * the holder when another active job now holds its dedupe key.
 */
export async function retryJob(state: MemoryState, id: string): Promise<boolean> {
  const key = jobKey(id);
  const row = key === undefined ? undefined : state.jobs.get(key);
  if (row === undefined || !(row.state === "dead" || row.state === "cancelled" || row.state === "failed")) return false;
  if (row.dedupeKey !== null) await keyReleased(state, row.queue, row.dedupeKey);
  const holder = row.dedupeKey === null ? undefined : state.holderOf(row.queue, row.dedupeKey, row.id);
  if (holder !== undefined) {
    throw new DatabaseError(
      `cannot retry job ${row.id}: its dedupe key ${JSON.stringify(row.dedupeKey)} of queue "${row.queue}" is now held by active job ${holder.id}; cancel or finish that job first`,
      { sqlState: "23505" },
    );
  }
  if (!(row.state === "dead" || row.state === "cancelled" || row.state === "failed")) return false;
  checkGroupKeys(state, [row]);
  requeue(state, row, state.now());
  return true;
}

/**
 * Runs up to `limit` dead jobs of `queue` again now, oldest death first,
 * each as {@link retryJob} would; a dead job whose dedupe key an active job
 * (or an open transaction) holds is left dead, and of several dead jobs
 * sharing a free key only the one that died last is queued.
 */
export function retryDeadJobs(state: MemoryState, params: { readonly queue: string; readonly limit: number }): number {
  const keyIsFree = (row: MemoryJobRow): boolean =>
    row.dedupeKey === null ||
    (state.holderOf(row.queue, row.dedupeKey) === undefined && state.keyHolds.get(keyOf(row.queue, row.dedupeKey))?.transaction.state !== "open");
  const eligible = [...state.rowsOf(params.queue)]
    .filter((row) => row.state === "dead" && keyIsFree(row))
    .sort((a, b) => a.finishedAt! - b.finishedAt! || a.seq - b.seq)
    .slice(0, params.limit);
  const lastOfKey = new Map<string, MemoryJobRow>();
  for (const row of eligible) {
    if (row.dedupeKey === null) continue;
    const seen = lastOfKey.get(row.dedupeKey);
    if (seen === undefined || row.finishedAt! > seen.finishedAt! || (row.finishedAt === seen.finishedAt && row.seq > seen.seq))
      lastOfKey.set(row.dedupeKey, row);
  }
  const picked = eligible.filter((row) => row.dedupeKey === null || lastOfKey.get(row.dedupeKey) === row);
  checkGroupKeys(state, picked);
  const now = state.now();
  for (const row of picked) requeue(state, row, now);
  return picked.length;
}

/**
 * Makes a `queued` or `failed` job due now (its `runAt` lowered to now,
 * attempts kept). False when the job does not exist or is not waiting (a
 * `blocked` step is not: it waits for its dependencies, not for a time).
 */
export function runJobNow(state: MemoryState, id: string): boolean {
  const key = jobKey(id);
  const row = key === undefined ? undefined : state.jobs.get(key);
  if (row === undefined || !isWaiting(row.state)) return false;
  const now = state.now();
  if (row.runAt > now) row.runAt = now;
  row.updatedAt = now;
  return true;
}

/**
 * `queued`, due now, with a fresh budget of attempts; lease and finish
 * cleared; back in its group or line, which it no longer holds. A workflow
 * step is `blocked` instead while a step it waits for has not succeeded,
 * and the steps its failure cancelled wait for it again (see `reopenStep`).
 */
function requeue(state: MemoryState, row: MemoryJobRow, now: number): void {
  row.state = "queued";
  row.runAt = now;
  row.maxAttempts = row.attempts + row.maxAttempts;
  row.lockedBy = null;
  row.lockedUntil = null;
  row.finishedAt = null;
  row.startBy = null;
  row.updatedAt = now;
  reopenStep(state, row, now);
  reenterGroup(state, row);
}

/** Waits while an open transaction holds the key. */
async function keyReleased(state: MemoryState, queue: string, dedupeKey: string): Promise<void> {
  for (let hold = state.keyHolds.get(keyOf(queue, dedupeKey)); hold?.transaction.state === "open"; hold = state.keyHolds.get(keyOf(queue, dedupeKey))) {
    await hold.ended;
  }
}
