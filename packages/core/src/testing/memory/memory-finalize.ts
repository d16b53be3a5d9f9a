import type { CompletedJob, DeadJob, JobAttempt, ProgressWrite, RetryingJob } from "../../store/job-store";
import type { ExtendedLeases } from "../../store/store-params";
import { recordDeath } from "./memory-dead-hooks";
import { propagateFailure, settleSucceeded } from "./memory-dependencies";
import { routeDeadLetter } from "./memory-dead-letter";
import { enterGroup, holdLine } from "./memory-groups";
import { durationBetween, recordFinishedAttempt, workerDuration } from "./memory-history";
import { jobKey, type MemoryJobRow } from "./memory-rows";
import type { MemoryState } from "./memory-state";

/**
 * The fence of every write after a claim: the job, if it is still
 * `running` in attempt `attempt`, owned by `workerId`.
 */
export function heldAttempt(state: MemoryState, workerId: string, job: JobAttempt): MemoryJobRow | undefined {
  const id = jobKey(job.id);
  const row = id === undefined ? undefined : state.jobs.get(id);
  return row?.state === "running" && row.lockedBy === workerId && row.attempts === job.attempt ? row : undefined;
}

/** Applies `write` to each attempt the worker still holds; returns the ids that applied. */
function eachHeld<J extends JobAttempt>(
  state: MemoryState,
  workerId: string,
  jobs: readonly J[],
  write: (row: MemoryJobRow, job: J) => void,
): readonly string[] {
  const applied: string[] = [];
  for (const job of jobs) {
    const row = heldAttempt(state, workerId, job);
    if (row === undefined) continue;
    write(row, job);
    applied.push(row.id);
  }
  return Object.freeze(applied);
}

/**
 * Extends to `now + leaseMs` the leases the worker still holds; of the
 * others, names those cancelled in the attempt asked about while the
 * worker owned them.
 */
export function extendLeases(
  state: MemoryState,
  params: { readonly workerId: string; readonly leaseMs: number; readonly jobs: readonly JobAttempt[] },
): ExtendedLeases {
  const now = state.now();
  const extended = eachHeld(state, params.workerId, params.jobs, (row) => {
    row.lockedUntil = now + params.leaseMs;
    row.updatedAt = now;
  });
  const cancelled: string[] = [];
  for (const job of params.jobs) {
    const id = jobKey(job.id);
    const row = id === undefined ? undefined : state.jobs.get(id);
    if (row?.state === "cancelled" && row.lockedBy === params.workerId && row.attempts === job.attempt) cancelled.push(row.id);
  }
  return Object.freeze({ extended, cancelled: Object.freeze(cancelled) });
}

/**
 * Marks a held attempt `succeeded` with its result and duration (the store
 * clock's since the claim when `durationMs` is `null`); the last owner is
 * kept. A workflow step's success settles the steps waiting for it.
 */
export function complete(state: MemoryState, row: MemoryJobRow, resultJson: string | null, durationMs: number | null, now: number): void {
  row.state = "succeeded";
  row.resultJson = resultJson;
  row.durationMs = workerDuration(durationMs) ?? durationBetween(row.startedAt, now);
  row.finishedAt = now;
  row.lockedUntil = null;
  row.updatedAt = now;
  settleSucceeded(state, row, now);
}

export function completeJobs(state: MemoryState, params: { readonly workerId: string; readonly jobs: readonly CompletedJob[] }): readonly string[] {
  const now = state.now();
  return eachHeld(state, params.workerId, params.jobs, (row, job) => complete(state, row, job.resultJson, job.durationMs, now));
}

/**
 * Schedules another attempt at `now + delayMs`: `failed` with the failure
 * stored, or `queued` keeping the previous error when nothing failed;
 * `spendAttempt: false` raises `maxAttempts` by one. Records the attempt's
 * history (`outcome`, by default `failed` with a failure and none without).
 */
export function scheduleRetries(state: MemoryState, params: { readonly workerId: string; readonly jobs: readonly RetryingJob[] }): readonly string[] {
  const now = state.now();
  return eachHeld(state, params.workerId, params.jobs, (row, job) => {
    const outcome = job.outcome !== undefined ? job.outcome : job.failure === null ? null : "failed";
    recordFinishedAttempt(state, row, { outcome, durationMs: workerDuration(job.durationMs), failure: job.failure, now });
    row.state = job.failure === null ? "queued" : "failed";
    row.runAt = now + job.delayMs;
    row.lockedUntil = null;
    if (job.failure !== null) {
      row.lastError = job.failure.message;
      row.errorCode = job.failure.code;
    }
    if (!job.spendAttempt) row.maxAttempts += 1;
    row.updatedAt = now;
    enterGroup(state, row);
  });
}

/**
 * Gives up on held attempts: `dead` with their failures, each with its
 * history record, pending `onDead` hook and dead-letter copy; a serial job
 * whose line holds on death holds its line; a workflow step's death
 * cancels the steps waiting for it (see `propagateFailure`).
 */
export function markJobsDead(state: MemoryState, params: { readonly workerId: string; readonly jobs: readonly DeadJob[] }): readonly string[] {
  const now = state.now();
  return eachHeld(state, params.workerId, params.jobs, (row, job) => {
    const durationMs = workerDuration(job.durationMs) ?? durationBetween(row.startedAt, now);
    recordFinishedAttempt(state, row, { outcome: job.outcome ?? "dead", durationMs, failure: job.failure, now });
    row.state = "dead";
    row.lastError = job.failure.message;
    row.errorCode = job.failure.code;
    row.durationMs = durationMs;
    row.finishedAt = now;
    row.lockedUntil = null;
    row.updatedAt = now;
    recordDeath(state, row, now);
    routeDeadLetter(state, row, now);
    holdLine(state, row);
    propagateFailure(state, row, now);
  });
}

/** Stores a held attempt's latest progress; false when the worker no longer holds it. */
export function writeProgress(state: MemoryState, params: ProgressWrite): boolean {
  const row = heldAttempt(state, params.workerId, params.job);
  if (row === undefined) return false;
  JSON.parse(params.progressJson);
  row.progressJson = params.progressJson;
  row.updatedAt = state.now();
  return true;
}
