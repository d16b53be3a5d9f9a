import type { ClaimedBatch } from "../../queue/queue-controls";
import type { JobStore } from "../../store/job-store";
import { dueByTurns, isGrouped } from "./memory-groups";
import { recordLapsedAttempt } from "./memory-history";
import { claimRoom } from "./memory-queue-controls";
import { inClaimOrder, isActive, isWaiting, toClaimedJob, type MemoryJobRow } from "./memory-rows";
import type { MemoryState } from "./memory-state";

/** What {@link claimBatch} takes: the parameters of `JobStore.claimBatch`. */
export type ClaimParams = Parameters<JobStore["claimBatch"]>[0];

/**
 * Claims up to `limit` jobs of a queue, within its controls: due `queued`
 * and `failed` jobs first (claim order; in a queue with groups, by turns
 * among them, see `dueByTurns`), then, to fill the batch and unless
 * `takeOverExpired` is false, `running` jobs whose lease lapsed with
 * attempts left, oldest lease first (each one's lapsed attempt recorded as
 * `lease-lost`). Each becomes `running`, owned by the worker until
 * `now + leaseMs`, with one more attempt counted; they come back in claim
 * order, with `hold` when the controls held the claim back.
 */
export function claimBatch(state: MemoryState, params: ClaimParams): ClaimedBatch {
  const now = state.now();
  const { room, hold } = claimRoom(state, params.queue, params.limit, now);
  // A job past its start-by deadline never starts (the expiry sweep cancels it); a follow-up waits for the job it follows.
  const followed = (row: MemoryJobRow): boolean => row.follows !== null && isActive(state.jobs.get(row.follows)?.state ?? "succeeded");
  const fits = (row: MemoryJobRow): boolean =>
    (params.maxTimeoutMs === undefined || row.timeoutMs === null || row.timeoutMs <= params.maxTimeoutMs) &&
    (row.startBy === null || row.startBy > now) &&
    !followed(row);
  const rows = [...state.rowsOf(params.queue)];
  const due = isGrouped(state, params.queue)
    ? dueByTurns(state, params.queue, room, now, fits)
    : rows
        .filter((row) => isWaiting(row.state) && row.runAt <= now && fits(row))
        .sort(inClaimOrder)
        .slice(0, room);
  const expired =
    params.takeOverExpired === false
      ? []
      : rows
          .filter((row) => row.state === "running" && row.lockedUntil! < now && row.attempts < row.maxAttempts && fits(row))
          .sort((a, b) => a.lockedUntil! - b.lockedUntil!)
          .slice(0, Math.max(room - due.length, 0));
  for (const row of expired) recordLapsedAttempt(state, row, `worker ${params.workerId}`);
  const claimed = [...due, ...expired];
  for (const row of claimed) takeLease(row, params.workerId, now, params.leaseMs);
  const jobs = claimed.sort(inClaimOrder).map(toClaimedJob);
  return Object.freeze(hold === undefined ? jobs : Object.assign(jobs, { hold }));
}

/** Makes `row` a `running` attempt of `workerId` until `now + leaseMs`, with one more attempt counted. */
export function takeLease(row: MemoryJobRow, workerId: string, now: number, leaseMs: number): void {
  row.state = "running";
  row.lockedBy = workerId;
  row.lockedUntil = now + leaseMs;
  row.attempts += 1;
  row.startedAt = now;
  row.updatedAt = now;
}
