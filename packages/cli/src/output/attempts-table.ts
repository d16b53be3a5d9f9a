import type { AttemptRecord, JobRecord } from "@stint/core";
import { formatTable, truncate } from "./table";
import { formatTime, humanDuration, isoTime } from "./time-text";

/**
 * One row of a job's attempt history as `stint jobs show` prints it: the
 * store's records, plus the attempt running now (outcome `running`), if any.
 */
export interface ShownAttempt {
  readonly attempt: number;
  readonly outcome: AttemptRecord["outcome"] | "running";
  readonly workerId: string | null;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  readonly durationMs: number | null;
  readonly error: AttemptRecord["error"];
}

/**
 * The attempts to show for `job`: its history (the successful attempt is
 * already in it, read from the job row) and, while it runs, the current one.
 *
 * @example
 * ```ts
 * const shown = shownAttempts(job, await store.listAttempts({ jobId: job.id }));
 * ```
 */
export function shownAttempts(job: JobRecord, history: readonly AttemptRecord[]): readonly ShownAttempt[] {
  if (job.state !== "running") return history;
  const current: ShownAttempt = {
    attempt: job.attempts,
    outcome: "running",
    workerId: job.lockedBy,
    startedAt: job.startedAt,
    finishedAt: null,
    durationMs: null,
    error: null,
  };
  return [...history, current];
}

/**
 * The attempts as an aligned table: attempt, outcome, worker, started,
 * duration and the first line of the error (cut to 60 characters).
 *
 * @example
 * ```ts
 * context.out.line(formatAttempts(shownAttempts(job, history)));
 * // attempt  outcome    worker    started               duration  error
 * // -------  ---------  --------  --------------------  --------  ------------------
 * //       1  failed     9b1e03aa  2026-11-21 06:10:39Z     41 ms  Error: rate limited
 * ```
 */
export function formatAttempts(attempts: readonly ShownAttempt[]): string {
  return formatTable(
    [
      { title: "attempt", align: "right" },
      { title: "outcome" },
      { title: "worker" },
      { title: "started" },
      { title: "duration", align: "right" },
      { title: "error" },
    ],
    attempts.map((attempt) => [
      String(attempt.attempt),
      attempt.outcome,
      attempt.workerId ?? "-",
      formatTime(attempt.startedAt),
      attempt.durationMs === null ? "-" : humanDuration(attempt.durationMs),
      attempt.error === null ? "-" : truncate(attempt.error.message ?? attempt.error.code ?? "-", 60),
    ]),
  );
}

/** An attempt as `--json` prints it: times in ISO 8601, the error as `{ message, code, stack }` or `null`. */
export function attemptJson(attempt: ShownAttempt): Record<string, unknown> {
  return {
    attempt: attempt.attempt,
    outcome: attempt.outcome,
    workerId: attempt.workerId,
    startedAt: isoTime(attempt.startedAt),
    finishedAt: isoTime(attempt.finishedAt),
    durationMs: attempt.durationMs,
    error: attempt.error,
  };
}
