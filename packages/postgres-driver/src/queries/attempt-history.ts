import { ErrorCode } from "@stint/core";
import { MAX_ERROR_MESSAGE, MAX_ERROR_TEXT, MAX_INT4 } from "@stint/core/driver";
import { sql, type RawBuilder } from "kysely";
import { heldBy } from "./held-by";
import { selectAnnouncing } from "./announce-finished";
import { joinNotifying } from "./notify-job-events";
import { moveToFinished, type JobValues } from "./finished-jobs";

/** `"<schema>"."job_attempts"`, quoted: one row per attempt that did not succeed. */
export function attemptsTable(schema: string): RawBuilder<unknown> {
  return sql.id(schema, "job_attempts");
}

/** The columns every history insert fills, in this order. */
export const ATTEMPT_COLUMNS: RawBuilder<unknown> = sql`(job_id, attempt, outcome, worker_id, started_at, finished_at, duration_ms, error_message, error_code, error_stack)`;

/**
 * Whole milliseconds from `from` to `to` as an `integer`, clamped to
 * `0 … 2^31-1`: the database clock's duration of an attempt.
 *
 * @example
 * ```ts
 * sql`duration_ms = ${millisecondsBetween(sql.ref("jobs.started_at"), sql`now()`)}`;
 * ```
 */
export function millisecondsBetween(from: RawBuilder<unknown>, to: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`least(greatest(round(extract(epoch FROM ${to} - ${from}) * 1000), 0), ${sql.lit(MAX_INT4)})::integer`;
}

/** `left(<text>, 1000)`: an error message as a history row keeps it (see `MAX_ERROR_MESSAGE`). */
export function cappedMessage(text: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`left(${text}, ${sql.lit(MAX_ERROR_MESSAGE)})`;
}

/** `left(<text>, 8192)`: an error's stack as a history row keeps it (see `MAX_ERROR_TEXT`). */
export function cappedStack(text: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`left(${text}, ${sql.lit(MAX_ERROR_TEXT)})`;
}

/**
 * The `lease-lost` history row of an attempt whose lease lapsed, from a
 * CTE (`source`) of the lapsed rows as they were before the takeover (`id`,
 * `attempts`, `locked_by`, `started_at`, `locked_until`): the attempt ended
 * for the record when its lease ran out, since its worker was not heard
 * from after that. `takenBy` says who noticed, for the message.
 *
 * @example
 * ```ts
 * sql`lapsed AS (${leaseLostInsert(schema, "expired", sql`'worker ' || ${workerId}::text`)})`;
 * ```
 */
export function leaseLostInsert(schema: string, source: string, takenBy: RawBuilder<unknown>): RawBuilder<unknown> {
  const from = sql.ref(source);
  return sql`INSERT INTO ${attemptsTable(schema)} ${ATTEMPT_COLUMNS}
  SELECT lapsed.id, lapsed.attempts, 'lease-lost', lapsed.locked_by, lapsed.started_at, lapsed.locked_until,
         ${millisecondsBetween(sql.ref("lapsed.started_at"), sql.ref("lapsed.locked_until"))},
         ${cappedMessage(sql`'The lease of worker ' || coalesce(lapsed.locked_by, '(unknown)') || ' expired at ' || lapsed.locked_until
           || ' without a word from it; ' || ${takenBy} || ' took the job over.'`)},
         ${sql.lit(ErrorCode.WorkerDied)}, NULL
    FROM ${from} AS lapsed`;
}

/**
 * The history rows of attempts a fenced finalize just wrote, from a CTE
 * (`source`) of its `RETURNING` rows: `id`, `attempts`, `locked_by`,
 * `started_at`, and the batch's `outcome`, `duration_ms` (the worker's, or
 * null for the database clock's since the claim), `last_error`,
 * `error_code` and `summary`. Rows with no outcome record nothing.
 *
 * @example
 * ```ts
 * sql`WITH retried AS (UPDATE … RETURNING …), history AS (${failedAttemptInsert(schema, "retried")}) SELECT id FROM retried`;
 * ```
 */
export function failedAttemptInsert(schema: string, source: string): RawBuilder<unknown> {
  return sql`INSERT INTO ${attemptsTable(schema)} ${ATTEMPT_COLUMNS}
  SELECT done.id, done.attempts, done.outcome, done.locked_by, done.started_at, now(),
         coalesce(done.duration_ms, ${millisecondsBetween(sql.ref("done.started_at"), sql`now()`)}),
         ${cappedMessage(sql`coalesce(done.summary, split_part(done.last_error, E'\n', 1))`)}, done.error_code,
         ${cappedStack(sql.ref("done.last_error"))}
    FROM ${sql.ref(source)} AS done
   WHERE done.outcome IS NOT NULL`;
}

/** A worker's measured duration as the `integer` a batch carries: whole, clamped, or `null` for none. */
export function workerDuration(durationMs: number | null | undefined): number | null {
  if (durationMs === null || durationMs === undefined || !Number.isFinite(durationMs)) return null;
  return Math.min(Math.max(Math.round(durationMs), 0), MAX_INT4);
}

/**
 * A fenced finalize of a batch that also writes the history of the
 * attempts it finalized, in one statement: `update` is the
 * `UPDATE … AS jobs SET … FROM <batch rows> AS <batch>` part, and the batch
 * rows carry `id`, `attempt`, `outcome`, `last_error`, `error_code` and
 * `summary`; `duration` is the duration to record; `also`, when given, is
 * one more statement over the finalized rows (they carry `queue` too), run
 * as a CTE named `also`. Returns the ids that applied; with `announce`, the
 * batch finishes its jobs, and their waiters are told (see `announceFinished`).
 *
 * @example
 * ```ts
 * finalizeRecordingAttempts(schema, { batch: "retry", workerId, duration: sql.ref("retry.duration_ms") }, sql`UPDATE … FROM unnest(…) AS retry(…)`);
 * ```
 */
export function finalizeRecordingAttempts(schema: string, parts: FinalizeParts, update: RawBuilder<unknown>): RawBuilder<{ id: string }> {
  const batch = sql.id(parts.batch);
  return sql<{ id: string }>`WITH finalized AS (
  ${update}
   WHERE jobs.id = ${batch}.id AND jobs.attempts = ${batch}.attempt
     AND ${heldBy(parts.workerId)}
  RETURNING jobs.id, jobs.attempts, jobs.queue, jobs.locked_by, jobs.started_at, ${batch}.outcome, ${parts.duration} AS duration_ms,
            ${batch}.last_error, ${batch}.error_code, ${batch}.summary
),
${finalizedTail(schema, parts)}`;
}

/**
 * {@link finalizeRecordingAttempts} for a batch that finishes its jobs:
 * `remove` is the `DELETE FROM … AS jobs USING <batch rows> AS <batch>`
 * part, and each removed row moves to `finished_jobs` (see
 * `moveToFinished`) with `finished` as its new values. Those values read
 * the removed row as `removed.<column>`, and the batch's values as
 * `removed.finished_last_error`, `removed.finished_error_code` and
 * `removed.finished_duration_ms` (`duration`, evaluated on the old row).
 *
 * @example
 * ```ts
 * finalizeMovingAttempts(schema, { batch: "dead", workerId, duration, announce: true }, sql`DELETE FROM … USING unnest(…) AS dead(…)`, {
 *   state: sql`'dead'`, last_error: sql`removed.finished_last_error`, finished_at: sql`now()`,
 * });
 * ```
 */
export function finalizeMovingAttempts(schema: string, parts: FinalizeParts, remove: RawBuilder<unknown>, finished: JobValues): RawBuilder<{ id: string }> {
  const batch = sql.id(parts.batch);
  return sql<{ id: string }>`WITH removed AS (
  ${remove}
   WHERE jobs.id = ${batch}.id AND jobs.attempts = ${batch}.attempt
     AND ${heldBy(parts.workerId)}
  RETURNING jobs.*, ${batch}.outcome AS finished_outcome, ${parts.duration} AS finished_duration_ms,
            ${batch}.last_error AS finished_last_error, ${batch}.error_code AS finished_error_code, ${batch}.summary AS finished_summary${
              parts.returning === undefined ? sql`` : sql`, ${parts.returning}`
            }
),
moved AS (
  ${moveToFinished(schema, "removed", finished)}
),
finalized AS (
  SELECT id, attempts, queue, locked_by, started_at, finished_outcome AS outcome, finished_duration_ms AS duration_ms,
         finished_last_error AS last_error, finished_error_code AS error_code, finished_summary AS summary
    FROM removed
),
${finalizedTail(schema, parts)}`;
}

/** What a fenced finalize of a batch is told: see {@link finalizeRecordingAttempts}. */
export interface FinalizeParts {
  readonly batch: string;
  readonly workerId: string;
  readonly duration: RawBuilder<unknown>;
  readonly announce?: boolean;
  readonly also?: readonly RawBuilder<unknown>[];
  /** More columns of the deleted rows' `RETURNING` list, for `finished` and `also` to read (moving finalizes only). */
  readonly returning?: RawBuilder<unknown>;
  /** The job event per finalized row (over `finalized`'s columns; `NULL` for none), told to job-event listeners (see `notifyJobEvents`). */
  readonly event?: RawBuilder<unknown>;
  /** The event's `jsonb` detail per finalized row; by default its error code. */
  readonly detail?: RawBuilder<unknown>;
}

/** The history insert, the `also` statement and the answer, after the `finalized` CTE. */
function finalizedTail(schema: string, parts: FinalizeParts): RawBuilder<unknown> {
  return sql`history AS (
  ${failedAttemptInsert(schema, "finalized")}
)${sql.join(
    (parts.also ?? []).map(
      (statement, index) => sql`,
${sql.id(`also_${index + 1}`)} AS (
  ${statement}
)`,
    ),
    sql``,
  )}
${parts.announce === true ? selectAnnouncing(schema, "finalized") : sql`SELECT id FROM finalized`}${
    parts.event === undefined
      ? sql``
      : sql`
 ${joinNotifying(schema, sql`finalized`, { kind: parts.event, attempt: sql.ref("attempts"), detail: parts.detail ?? sql`to_jsonb(error_code)` })}`
  }`;
}
