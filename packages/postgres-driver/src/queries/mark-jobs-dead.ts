import type { MarkJobsDeadParams } from "@stint/core/driver";
import { lineHoldInsert } from "./line-hold";
import { sql } from "kysely";
import type { Statements } from "../connection/statement";
import { finalizeMovingAttempts, millisecondsBetween, workerDuration } from "./attempt-history";
import { deadHookInsert } from "./dead-hooks-table";
import { deadLetterIdColumn, deadLetterInsert, metaLinkingCopy } from "./dead-letter-copy";
import { jobsTable } from "./job-row";
import { namedStatement } from "./named-statement";

/**
 * Gives up on many jobs the worker still owns, in one statement: each
 * leaves `jobs` for `finished_jobs` (see `moveToFinished`) as `dead`, with
 * its failure, `finished_at = now()`, `duration_ms` (the worker's, or the
 * database clock's since the claim) and no lease. Fenced on owner and
 * attempt; returns the ids that applied. The same statement inserts each
 * applied attempt's history row (outcome `dead`, or `lease-lost` when
 * given) and its death's pending `onDead` hook (see `claimDeadHooks`), and
 * tells the jobs' waiters (see `announceFinished`) and job-event listeners
 * (`dead`, see `notifyJobEvents`). A job whose meta names a dead-letter
 * queue is copied there in the same statement (see `deadLetterInsert`),
 * and its finished row's meta gets the copy's id; a batch whose every job
 * says `deadLetter: false` leaves those parts out of the statement.
 *
 * ### SQL
 * ```sql
 * WITH removed AS (
 *   DELETE FROM "stint"."jobs" AS jobs
 *    USING unnest($2::bigint[], $3::integer[], $4::text[], $5::text[], $6::text[], $7::integer[], $8::text[])
 *          AS dead(id, attempt, last_error, error_code, outcome, duration_ms, summary)
 *    WHERE jobs.id = dead.id AND jobs.attempts = dead.attempt
 *      AND jobs.locked_by = $1 AND (jobs.state = 'running') IS TRUE
 *   RETURNING jobs.*, dead.outcome AS finished_outcome,
 *             coalesce(dead.duration_ms, <now() - started_at in ms>) AS finished_duration_ms, …,
 *             CASE WHEN <meta names a dead-letter queue> THEN nextval('"stint".jobs_id_seq') END AS dead_letter_id),
 * moved AS (INSERT INTO "stint"."finished_jobs" (…)
 *           SELECT …, 'dead', finished_last_error, finished_error_code, finished_duration_ms, now(), … FROM removed),
 * finalized AS (SELECT id, attempts, queue, locked_by, started_at, finished_outcome AS outcome, … FROM removed),
 * history AS (INSERT INTO "stint"."job_attempts" (…) SELECT … FROM finalized),
 * also_1 AS (INSERT INTO "stint"."dead_hooks" (job_id, attempt, queue, error_code, last_error)
 *          SELECT id, attempts, queue, error_code, last_error FROM finalized ON CONFLICT (job_id, attempt) DO NOTHING),
 * also_2 AS (INSERT INTO "stint"."jobs" (…) SELECT dead_letter_id, <its dead-letter queue>, payload, … FROM removed
 *             WHERE dead_letter_id IS NOT NULL)
 * SELECT finalized.id FROM finalized
 *  CROSS JOIN (SELECT "stint".notify_awaited($9, array_agg(id)) FROM finalized) AS announced
 *  CROSS JOIN (SELECT CASE WHEN EXISTS (SELECT FROM "stint".job_event_listeners …) THEN (SELECT "stint".notify_job_events(…) FROM finalized) ELSE 0 END) AS notified
 * ```
 *
 * @example
 * ```ts
 * const applied = await markJobsDead(runner, "stint", {
 *   workerId,
 *   jobs: [{ id: "812", attempt: 3, failure: { message, code: "STINT_PERMANENT" }, durationMs: 41 }],
 * });
 * ```
 */
export async function markJobsDead(statements: Statements, schema: string, params: MarkJobsDeadParams): Promise<readonly string[]> {
  const { jobs } = params;
  if (jobs.length === 0) return Object.freeze([]);
  // The worker says which deaths may have a copy (their claimed meta names a dead-letter queue): a batch with none
  // runs the statement without the copy's parts, as before dead-letter queues.
  const routes = jobs.some((job) => job.deadLetter !== false);
  const remove = sql`DELETE FROM ${jobsTable(schema)} AS jobs
   USING unnest(${jobs.map((job) => job.id)}::bigint[],
                ${jobs.map((job) => job.attempt)}::integer[],
                ${jobs.map((job) => job.failure.message)}::text[],
                ${jobs.map((job) => job.failure.code)}::text[],
                ${jobs.map((job) => job.outcome ?? "dead")}::text[],
                ${jobs.map((job) => workerDuration(job.durationMs))}::integer[],
                ${jobs.map((job) => job.failure.summary ?? null)}::text[])
         AS dead(id, attempt, last_error, error_code, outcome, duration_ms, summary)`;
  const statement = finalizeMovingAttempts(
    schema,
    {
      batch: "dead",
      workerId: params.workerId,
      duration: sql`coalesce(dead.duration_ms, ${millisecondsBetween(sql.ref("jobs.started_at"), sql`now()`)})`,
      announce: true,
      also: routes
        ? [
            deadHookInsert(schema, "finalized"),
            lineHoldInsert(schema, "removed"),
            deadLetterInsert(schema, "removed", { errorCode: sql.ref("removed.finished_error_code"), lastError: sql.ref("removed.finished_last_error") }),
          ]
        : [deadHookInsert(schema, "finalized"), lineHoldInsert(schema, "removed")],
      ...(routes ? { returning: deadLetterIdColumn(schema) } : {}),
      event: sql`'dead'`,
    },
    remove,
    {
      state: sql`'dead'`,
      last_error: sql`removed.finished_last_error`,
      ...(routes ? { meta: metaLinkingCopy("removed") } : {}),
      error_code: sql`removed.finished_error_code`,
      duration_ms: sql`removed.finished_duration_ms`,
      finished_at: sql`now()`,
      locked_until: sql`NULL`,
      updated_at: sql`now()`,
    },
  );
  const { rows } = await statements.run<{ id: string }>(namedStatement(statement));
  return Object.freeze(rows.map((row) => String(row.id)));
}
