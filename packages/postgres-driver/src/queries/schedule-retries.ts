import type { RetryingJob } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { jobsTable } from "./job-row";
import { prepared } from "./prepared";

/** What {@link scheduleRetries} takes. */
export interface ScheduleRetriesParams {
  readonly workerId: string;
  readonly jobs: readonly RetryingJob[];
}

/**
 * Schedules another attempt of many jobs the worker still owns, in one
 * statement; returns the ids that applied. Each row gets
 * `run_at = now() + delayMs`, its lease cleared, fenced on owner and
 * attempt. With a failure the state is `failed` ("failed, retry scheduled")
 * and the failure is stored; without one (a snooze, a release at shutdown)
 * nothing failed, so the job goes back to `queued` and keeps its previous
 * error. `spendAttempt: false` gives the attempt back by raising
 * `max_attempts` by one.
 *
 * ### SQL
 * ```sql
 * UPDATE "stint"."jobs" AS jobs
 *    SET state = CASE WHEN retry.last_error IS NULL THEN 'queued' ELSE 'failed' END,
 *        run_at = now() + retry.delay_ms * interval '1 millisecond', locked_until = NULL,
 *        last_error = coalesce(retry.last_error, jobs.last_error),
 *        error_code = CASE WHEN retry.last_error IS NULL THEN jobs.error_code ELSE retry.error_code END,
 *        max_attempts = jobs.max_attempts + CASE WHEN retry.spend_attempt THEN 0 ELSE 1 END,
 *        updated_at = now()
 *   FROM unnest($2::bigint[], $3::integer[], $4::double precision[], $5::text[], $6::text[], $7::boolean[])
 *        AS retry(id, attempt, delay_ms, last_error, error_code, spend_attempt)
 *  WHERE jobs.id = retry.id AND jobs.attempts = retry.attempt
 *    AND jobs.locked_by = $1 AND jobs.state = 'running'
 * RETURNING jobs.id
 * ```
 *
 * @example
 * ```ts
 * const applied = await scheduleRetries(db, "stint", {
 *   workerId,
 *   jobs: [
 *     { id: "812", attempt: 2, delayMs: 30_000, failure: { message: "rate limited", code: "STINT_RETRYABLE" }, spendAttempt: true },
 *     { id: "813", attempt: 1, delayMs: 60_000, failure: null, spendAttempt: false }, // a snooze
 *   ],
 * });
 * ```
 */
export async function scheduleRetries(executor: Kysely<any>, schema: string, params: ScheduleRetriesParams): Promise<readonly string[]> {
  const { jobs } = params;
  if (jobs.length === 0) return Object.freeze([]);
  const { rows } = await prepared(sql<{ id: string }>`UPDATE ${jobsTable(schema)} AS jobs
   SET state = CASE WHEN retry.last_error IS NULL THEN 'queued' ELSE 'failed' END,
       run_at = now() + retry.delay_ms * interval '1 millisecond',
       locked_until = NULL,
       last_error = coalesce(retry.last_error, jobs.last_error),
       error_code = CASE WHEN retry.last_error IS NULL THEN jobs.error_code ELSE retry.error_code END,
       max_attempts = jobs.max_attempts + CASE WHEN retry.spend_attempt THEN 0 ELSE 1 END,
       updated_at = now()
  FROM unnest(${jobs.map((job) => job.id)}::bigint[],
              ${jobs.map((job) => job.attempt)}::integer[],
              ${jobs.map((job) => job.delayMs)}::double precision[],
              ${jobs.map((job) => job.failure?.message ?? null)}::text[],
              ${jobs.map((job) => job.failure?.code ?? null)}::text[],
              ${jobs.map((job) => job.spendAttempt)}::boolean[]) AS retry(id, attempt, delay_ms, last_error, error_code, spend_attempt)
 WHERE jobs.id = retry.id AND jobs.attempts = retry.attempt
   AND jobs.locked_by = ${params.workerId} AND jobs.state = 'running'
RETURNING jobs.id`).execute(executor);
  return Object.freeze(rows.map((row) => String(row.id)));
}
