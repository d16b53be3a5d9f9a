import { ErrorCode } from "../../errors/error-codes";
import { MAX_ERROR_MESSAGE, MAX_ERROR_TEXT, MAX_INT4 } from "../../limits";
import type { AttemptOutcomeName, AttemptRecord } from "../../store/attempt-record";
import type { JobFailure } from "../../store/job-store";
import { jobKey, type MemoryJobRow } from "./memory-rows";
import type { MemoryState } from "./memory-state";

/** A duration as the store keeps it: whole milliseconds, within `0 … 2^31-1`. */
function clampDuration(ms: number): number {
  return Math.min(Math.max(Math.round(ms), 0), MAX_INT4);
}

/** A worker's measured duration, clamped, or `null` when it gave none. */
export function workerDuration(durationMs: number | null | undefined): number | null {
  return durationMs === null || durationMs === undefined || !Number.isFinite(durationMs) ? null : clampDuration(durationMs);
}

/** The store clock's duration from `from` to `to` (`null` when `from` is unknown). */
export function durationBetween(from: number | null, to: number): number | null {
  return from === null ? null : clampDuration(to - from);
}

/** The first `length` characters of `text` (as `left()` counts them: code points). */
function left(text: string, length: number): string {
  if (text.length <= length) return text;
  return Array.from(text).slice(0, length).join("");
}

/**
 * Records the attempt a fenced write just ended (`row` as it was before
 * the write): its worker, claim time, `outcome`, duration and failure.
 * Nothing is recorded when `outcome` is `null`.
 */
export function recordFinishedAttempt(
  state: MemoryState,
  row: MemoryJobRow,
  ended: { readonly outcome: AttemptOutcomeName | null; readonly durationMs: number | null; readonly failure: JobFailure | null; readonly now: number },
): void {
  if (ended.outcome === null) return;
  const { failure } = ended;
  state.recordAttempt({
    jobId: row.id,
    attempt: row.attempts,
    outcome: ended.outcome,
    workerId: row.lockedBy,
    startedAt: row.startedAt,
    finishedAt: ended.now,
    durationMs: ended.durationMs ?? durationBetween(row.startedAt, ended.now),
    errorMessage: failure === null ? null : left(failure.summary ?? failure.message.split("\n")[0]!, MAX_ERROR_MESSAGE),
    errorCode: failure?.code ?? null,
    errorStack: failure === null ? null : left(failure.message, MAX_ERROR_TEXT),
  });
}

/**
 * Records the `lease-lost` attempt of a running job whose lease lapsed
 * (`row` as it was before the takeover): it ended, for the record, when
 * its lease ran out. `takenBy` says who noticed.
 */
export function recordLapsedAttempt(state: MemoryState, row: MemoryJobRow, takenBy: string): void {
  const lapsedAt = row.lockedUntil!;
  state.recordAttempt({
    jobId: row.id,
    attempt: row.attempts,
    outcome: "lease-lost",
    workerId: row.lockedBy,
    startedAt: row.startedAt,
    finishedAt: lapsedAt,
    durationMs: durationBetween(row.startedAt, lapsedAt),
    errorMessage: left(
      `The lease of worker ${row.lockedBy ?? "(unknown)"} expired at ${new Date(lapsedAt).toISOString()} without a word from it; ${takenBy} took the job over.`,
      MAX_ERROR_MESSAGE,
    ),
    errorCode: ErrorCode.WorkerDied,
    errorStack: null,
  });
}

/**
 * A job's attempts, oldest first: its history records in the order they
 * were written, then, for a `succeeded` job, the successful attempt read
 * from the job. Empty for a job that does not exist.
 */
export function listAttempts(state: MemoryState, jobId: string): readonly AttemptRecord[] {
  const key = jobKey(jobId);
  if (key === undefined) return Object.freeze([]);
  const records = (state.attempts.get(key) ?? []).map((row) =>
    toRecord(row.jobId, row.attempt, row.outcome, row.workerId, row.startedAt, row.finishedAt, row.durationMs, {
      message: row.errorMessage,
      code: row.errorCode,
      stack: row.errorStack,
    }),
  );
  const job = state.jobs.get(key);
  if (job?.state === "succeeded") {
    records.push(
      toRecord(job.id, job.attempts, "succeeded", job.lockedBy, job.startedAt, job.finishedAt, job.durationMs, { message: null, code: null, stack: null }),
    );
  }
  return Object.freeze(records);
}

function toRecord(
  jobId: string,
  attempt: number,
  outcome: AttemptOutcomeName,
  workerId: string | null,
  startedAt: number | null,
  finishedAt: number | null,
  durationMs: number | null,
  error: { readonly message: string | null; readonly code: string | null; readonly stack: string | null },
): AttemptRecord {
  const failed = error.message !== null || error.code !== null || error.stack !== null;
  return Object.freeze({
    jobId,
    attempt,
    outcome,
    workerId,
    startedAt: startedAt === null ? null : new Date(startedAt),
    finishedAt: finishedAt === null ? null : new Date(finishedAt),
    durationMs,
    error: failed ? Object.freeze({ ...error }) : null,
  });
}
