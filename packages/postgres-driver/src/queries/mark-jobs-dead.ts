import type { MarkJobsDeadParams } from "@stint/core/driver";
import { sql } from "kysely";
import type { Statements } from "../connection/statement";
import { finalizeRecordingAttempts, millisecondsBetween, workerDuration } from "./attempt-history";
import { deadHookInsert } from "./dead-hooks-table";
import { jobsTable } from "./job-row";
import { namedStatement } from "./named-statement";

/**
 * Gives up on many jobs the worker still owns, in one statement: state
 * `dead` with each one's failure, `finished_at = now()`, `duration_ms` (the
 * worker's, or the database clock's since the claim), lease cleared.
 * Fenced on owner and attempt; returns the ids that applied. The same
 * statement inserts each applied attempt's history row (outcome `dead`, or
 * `lease-lost` when given) and its death's pending `onDead` hook (see
 * `claimDeadHooks`), and tells the jobs' waiters (see `announceFinished`).
 *
 * ### SQL
 * ```sql
 * WITH finalized AS (
 *   UPDATE "stint"."jobs" AS jobs
 *      SET state = 'dead', last_error = dead.last_error, error_code = dead.error_code,
 *          duration_ms = coalesce(dead.duration_ms, <now() - started_at in ms>),
 *          finished_at = now(), locked_until = NULL, updated_at = now()
 *     FROM unnest($2::bigint[], $3::integer[], $4::text[], $5::text[], $6::text[], $7::integer[], $8::text[])
 *          AS dead(id, attempt, last_error, error_code, outcome, duration_ms, summary)
 *    WHERE jobs.id = dead.id AND jobs.attempts = dead.attempt
 *      AND jobs.locked_by = $1 AND (jobs.state = 'running') IS TRUE
 *   RETURNING jobs.id, jobs.attempts, jobs.queue, jobs.locked_by, jobs.started_at, jobs.duration_ms, dead.*),
 * history AS (INSERT INTO "stint"."job_attempts" (…) SELECT … FROM finalized),
 * also AS (INSERT INTO "stint"."dead_hooks" (job_id, attempt, queue, error_code, last_error)
 *          SELECT id, attempts, queue, error_code, last_error FROM finalized ON CONFLICT (job_id, attempt) DO NOTHING)
 * SELECT finalized.id FROM finalized
 *  CROSS JOIN (SELECT "stint".notify_awaited($9, array_agg(id)) FROM finalized) AS announced
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
  const update = sql`UPDATE ${jobsTable(schema)} AS jobs
     SET state = 'dead', last_error = dead.last_error, error_code = dead.error_code,
         duration_ms = coalesce(dead.duration_ms, ${millisecondsBetween(sql.ref("jobs.started_at"), sql`now()`)}),
         finished_at = now(), locked_until = NULL, updated_at = now()
    FROM unnest(${jobs.map((job) => job.id)}::bigint[],
                ${jobs.map((job) => job.attempt)}::integer[],
                ${jobs.map((job) => job.failure.message)}::text[],
                ${jobs.map((job) => job.failure.code)}::text[],
                ${jobs.map((job) => job.outcome ?? "dead")}::text[],
                ${jobs.map((job) => workerDuration(job.durationMs))}::integer[],
                ${jobs.map((job) => job.failure.summary ?? null)}::text[])
         AS dead(id, attempt, last_error, error_code, outcome, duration_ms, summary)`;
  const statement = finalizeRecordingAttempts(
    schema,
    { batch: "dead", workerId: params.workerId, duration: sql.ref("jobs.duration_ms"), announce: true, also: deadHookInsert(schema, "finalized") },
    update,
  );
  const { rows } = await statements.run<{ id: string }>(namedStatement(statement));
  return Object.freeze(rows.map((row) => String(row.id)));
}
