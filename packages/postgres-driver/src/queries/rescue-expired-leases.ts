import type { RescueExpiredLeasesParams, RescueResult } from "@stint/core/driver";
import { ErrorCode } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { leaseLostInsert, millisecondsBetween } from "./attempt-history";
import { deadHookInsert } from "./dead-hooks-table";
import { jobsTable } from "./job-row";
import { announceFinished } from "./announce-finished";

/**
 * Handles `running` jobs whose lease expired (their worker died or lost its
 * connection) in one conditional UPDATE, never a write-back of rows read
 * earlier: those with attempts left become `failed`, due now; the others
 * become `dead` with `finished_at`. Both record `STINT_WORKER_DIED` and a
 * `last_error` naming the attempt that never finished; each death also
 * gets its pending `onDead` hook (see `claimDeadHooks`), so a worker of the
 * queue runs the hook although none was there when the job died. Rows
 * another transaction holds are skipped. Waiters of the jobs that became
 * `dead` are told (see `announceFinished`).
 *
 * ### SQL
 * ```sql
 * WITH expired AS MATERIALIZED (
 *   SELECT id, attempts, locked_by, started_at, locked_until FROM "stint"."jobs"
 *    WHERE state = 'running' AND locked_until < now() [AND queue = ANY($1::text[])]
 *    ORDER BY locked_until LIMIT $2 FOR UPDATE SKIP LOCKED),
 * rescued AS (
 *   UPDATE "stint"."jobs" AS jobs
 *      SET state = CASE WHEN jobs.attempts < jobs.max_attempts THEN 'failed' ELSE 'dead' END,
 *          run_at = CASE WHEN … THEN now() ELSE jobs.run_at END,
 *          finished_at = CASE WHEN … THEN NULL ELSE now() END,
 *          duration_ms = CASE WHEN … THEN jobs.duration_ms ELSE <locked_until - started_at in ms> END,
 *          error_code = 'STINT_WORKER_DIED', last_error = 'The worker stopped … during attempt ' || jobs.attempts || …,
 *          locked_until = NULL, updated_at = now()
 *     FROM expired WHERE jobs.id = expired.id
 *   RETURNING jobs.id, jobs.attempts, jobs.queue, jobs.state, jobs.error_code, jobs.last_error),
 * history AS (INSERT INTO "stint"."job_attempts" (…) SELECT id, attempts, 'lease-lost', locked_by, … FROM expired),
 * hooks AS (INSERT INTO "stint"."dead_hooks" (…) SELECT id, attempts, queue, error_code, last_error FROM rescued
 *            WHERE state = 'dead' ON CONFLICT (job_id, attempt) DO NOTHING)
 * SELECT count(*) FILTER (WHERE state = 'failed') AS retried, count(*) FILTER (WHERE state = 'dead') AS dead,
 *        "stint".notify_awaited($3, array_agg(id) FILTER (WHERE state = 'dead')) AS announced
 *   FROM rescued
 * ```
 *
 * @example
 * ```ts
 * const { retried, dead } = await rescueExpiredLeases(db, "stint", { limit: 1000 });
 * ```
 */
export async function rescueExpiredLeases(executor: Kysely<any>, schema: string, params: RescueExpiredLeasesParams): Promise<RescueResult> {
  const jobs = jobsTable(schema);
  const queueFilter = params.queues === undefined ? sql`` : sql`AND queue = ANY(${[...params.queues]}::text[])`;
  const { rows } = await sql<{ retried: string; dead: string }>`WITH expired AS MATERIALIZED (
  SELECT id, attempts, locked_by, started_at, locked_until FROM ${jobs}
   WHERE state = 'running' AND locked_until < now() ${queueFilter}
   ORDER BY locked_until
   LIMIT ${params.limit}::integer
   FOR UPDATE SKIP LOCKED
),
rescued AS (
  UPDATE ${jobs} AS jobs
     SET state = CASE WHEN jobs.attempts < jobs.max_attempts THEN 'failed' ELSE 'dead' END,
         run_at = CASE WHEN jobs.attempts < jobs.max_attempts THEN now() ELSE jobs.run_at END,
         finished_at = CASE WHEN jobs.attempts < jobs.max_attempts THEN NULL ELSE now() END,
         duration_ms = CASE WHEN jobs.attempts < jobs.max_attempts THEN jobs.duration_ms
                            ELSE ${millisecondsBetween(sql.ref("jobs.started_at"), sql.ref("jobs.locked_until"))} END,
         error_code = ${ErrorCode.WorkerDied}::text,
         last_error = 'The worker ' || coalesce(jobs.locked_by, 'that held the job')
                      || ' stopped (its process died or lost its database connection) during attempt '
                      || jobs.attempts || ' of ' || jobs.max_attempts
                      || ' without finishing it; its lease expired at ' || jobs.locked_until || '.'
                      || CASE WHEN jobs.attempts < jobs.max_attempts THEN ' Retrying.' ELSE ' No attempts left.' END,
         locked_until = NULL,
         updated_at = now()
    FROM expired
   WHERE jobs.id = expired.id
  RETURNING jobs.id, jobs.attempts, jobs.queue, jobs.state, jobs.error_code, jobs.last_error
),
history AS (
  ${leaseLostInsert(schema, "expired", sql`'the lease rescue'`)}
),
hooks AS (
  ${deadHookInsert(schema, "rescued", sql`died.state = 'dead'`)}
)
SELECT count(*) FILTER (WHERE state = 'failed') AS retried,
       count(*) FILTER (WHERE state = 'dead') AS dead,
       ${announceFinished(schema, sql`array_agg(id) FILTER (WHERE state = 'dead')`)} AS announced
  FROM rescued`.execute(executor);
  const row = rows[0];
  return Object.freeze({ retried: Number(row?.retried ?? 0), dead: Number(row?.dead ?? 0) });
}
