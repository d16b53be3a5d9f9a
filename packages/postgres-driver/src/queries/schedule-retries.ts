import type { ScheduleRetriesParams, RetryingJob } from "@stint/core/driver";
import { sql } from "kysely";
import type { Statements } from "../connection/statement";
import { finalizeRecordingAttempts, workerDuration } from "./attempt-history";
import { jobsTable } from "./job-row";
import { namedStatement } from "./named-statement";

/**
 * Schedules another attempt of many jobs the worker still owns, in one
 * statement; returns the ids that applied. Each row gets
 * `run_at = now() + delayMs`, its lease cleared, fenced on owner and
 * attempt. With a failure the state is `failed` ("failed, retry scheduled")
 * and the failure is stored; without one (a snooze, a release at shutdown)
 * nothing failed, so the job goes back to `queued` and keeps its previous
 * error. Job-event listeners hear `failed` for a failure and `requeued`
 * (reason `snooze` for the `snoozed` outcome, `release` otherwise) for the
 * rest. `spendAttempt: false` gives the attempt back by raising
 * `max_attempts` by one.
 *
 * The same statement inserts the attempt's history row (`job_attempts`)
 * for each job that applied and has an `outcome` (by default `failed` when
 * there is a failure, none otherwise), with the worker's duration or, when
 * it gave none, the database clock's since the claim.
 *
 * @example
 * ```ts
 * const applied = await scheduleRetries(runner, "stint", {
 *   workerId,
 *   jobs: [
 *     { id: "812", attempt: 2, delayMs: 30_000, failure: { message: "rate limited", code: "STINT_RETRYABLE" }, spendAttempt: true },
 *     { id: "813", attempt: 1, delayMs: 60_000, failure: null, spendAttempt: false, outcome: "snoozed" },
 *   ],
 * });
 * ```
 */
export async function scheduleRetries(statements: Statements, schema: string, params: ScheduleRetriesParams): Promise<readonly string[]> {
  const { jobs } = params;
  if (jobs.length === 0) return Object.freeze([]);
  const update = sql`UPDATE ${jobsTable(schema)} AS jobs
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
                ${jobs.map((job) => job.spendAttempt)}::boolean[],
                ${jobs.map(historyOutcome)}::text[],
                ${jobs.map((job) => workerDuration(job.durationMs))}::integer[],
                ${jobs.map((job) => job.failure?.summary ?? null)}::text[])
         AS retry(id, attempt, delay_ms, last_error, error_code, spend_attempt, outcome, duration_ms, summary)`;
  const statement = finalizeRecordingAttempts(
    schema,
    {
      batch: "retry",
      workerId: params.workerId,
      duration: sql.ref("retry.duration_ms"),
      // One event per job: a failure is `failed` (with its code); without one the job is `requeued`, snoozed or released.
      event: sql`CASE WHEN last_error IS NOT NULL THEN 'failed' ELSE 'requeued' END`,
      detail: sql`CASE WHEN last_error IS NOT NULL THEN to_jsonb(error_code)
                  WHEN outcome = 'snoozed' THEN to_jsonb('snooze'::text) ELSE to_jsonb('release'::text) END`,
    },
    update,
  );
  const { rows } = await statements.run<{ id: string }>(namedStatement(statement));
  return Object.freeze(rows.map((row) => String(row.id)));
}

/** The history outcome of a retry: as given, else `failed` when something failed and none when nothing did. */
function historyOutcome(job: RetryingJob): string | null {
  if (job.outcome !== undefined) return job.outcome;
  return job.failure === null ? null : "failed";
}
