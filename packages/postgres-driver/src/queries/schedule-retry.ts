import type { FenceResult, JobAttempt, JobFailure } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { jobsTable, millisecondsInterval } from "./job-row";
import { prepared } from "./prepared";

/** What {@link scheduleRetry} takes. */
export interface ScheduleRetryParams {
  readonly workerId: string;
  readonly job: JobAttempt;
  readonly delayMs: number;
  /** Stored as `last_error` / `error_code`; `null` keeps the previous ones (a snooze). */
  readonly failure: JobFailure | null;
  /** `false` gives the attempt back by raising `max_attempts` by one. */
  readonly spendAttempt: boolean;
}

/**
 * Schedules another attempt of a job the worker still owns at
 * `run_at = now() + delayMs`, lease cleared, fenced on owner and attempt.
 * With a failure the state is `failed` ("failed, retry scheduled") and the
 * failure is stored; without one (a snooze, a release at shutdown) nothing
 * failed, so the job goes back to `queued` and keeps its previous error.
 *
 * ### SQL
 * ```sql
 * UPDATE "stint"."jobs"
 *    SET state = CASE WHEN $2 THEN 'failed' ELSE 'queued' END,
 *        run_at = now() + $1 * interval '1 millisecond', locked_until = NULL,
 *        last_error = CASE WHEN $2 THEN $3 ELSE last_error END,
 *        error_code = CASE WHEN $2 THEN $4 ELSE error_code END,
 *        max_attempts = max_attempts + CASE WHEN $5 THEN 0 ELSE 1 END, updated_at = now()
 *  WHERE id = $6 AND locked_by = $7 AND attempts = $8 AND state = 'running'
 * RETURNING id
 * ```
 *
 * @example
 * ```ts
 * const { applied } = await scheduleRetry(db, "stint", {
 *   workerId, job: { id: "812", attempt: 2 }, delayMs: 30_000,
 *   failure: { message: "rate limited", code: "STINT_RETRYABLE" }, spendAttempt: true,
 * });
 * ```
 */
export async function scheduleRetry(executor: Kysely<any>, schema: string, params: ScheduleRetryParams): Promise<FenceResult> {
  const { failure } = params;
  const hasFailure = failure !== null;
  const { rows } = await prepared(sql<{ id: string }>`UPDATE ${jobsTable(schema)}
   SET state = CASE WHEN ${hasFailure}::boolean THEN 'failed' ELSE 'queued' END,
       run_at = now() + ${millisecondsInterval(params.delayMs)},
       locked_until = NULL,
       last_error = CASE WHEN ${hasFailure}::boolean THEN ${failure?.message ?? null}::text ELSE last_error END,
       error_code = CASE WHEN ${hasFailure}::boolean THEN ${failure?.code ?? null}::text ELSE error_code END,
       max_attempts = max_attempts + CASE WHEN ${params.spendAttempt}::boolean THEN 0 ELSE 1 END,
       updated_at = now()
 WHERE id = ${params.job.id}::bigint AND locked_by = ${params.workerId}
   AND attempts = ${params.job.attempt}::integer AND state = 'running'
RETURNING id`).execute(executor);
  return Object.freeze({ applied: rows.length > 0 });
}
