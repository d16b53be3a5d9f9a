import type { JobIdParams } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { ATTEMPT_COLUMNS, attemptsTable, millisecondsBetween } from "./attempt-history";
import { isJobId, jobsTable } from "./job-row";
import { selectAnnouncing } from "./announce-finished";

/**
 * Cancels a job that has not finished (`queued`, `failed` or `running`):
 * state `cancelled`, `finished_at = now()`, lease cleared. A running attempt
 * carries on in its worker, but its outcome is refused by the fence; the
 * same statement gives it a `cancelled` history row and the job its
 * `duration_ms` (the database clock's, since the claim), and tells the
 * job's waiters (see `announceFinished`). Returns false when the job does
 * not exist or has already finished.
 *
 * ### SQL
 * ```sql
 * WITH target AS MATERIALIZED (
 *   SELECT id, state, attempts, locked_by, started_at FROM "stint"."jobs"
 *    WHERE id = $1 AND state IN ('queued', 'failed', 'running') FOR UPDATE),
 * cancelled AS (
 *   UPDATE "stint"."jobs" AS jobs
 *      SET state = 'cancelled', finished_at = now(), locked_until = NULL, updated_at = now(),
 *          duration_ms = CASE WHEN target.state = 'running' THEN <now() - started_at in ms> ELSE jobs.duration_ms END
 *     FROM target WHERE jobs.id = target.id
 *   RETURNING target.*),
 * history AS (
 *   INSERT INTO "stint"."job_attempts" (…)
 *   SELECT id, attempts, 'cancelled', locked_by, started_at, now(), <ms>, 'Cancelled by an operator', 'STINT_CANCELLED', NULL
 *     FROM cancelled WHERE state = 'running')
 * SELECT cancelled.id FROM cancelled
 *  CROSS JOIN (SELECT "stint".notify_awaited($2, array_agg(id)) FROM cancelled) AS announced
 * ```
 *
 * @example
 * ```ts
 * if (!(await cancelJob(db, "stint", { id: "812" }))) console.log("job 812 had already finished");
 * ```
 */
export async function cancelJob(executor: Kysely<any>, schema: string, params: JobIdParams): Promise<boolean> {
  if (!isJobId(params.id)) return false;
  const jobs = jobsTable(schema);
  const ranFor = millisecondsBetween(sql.ref("target.started_at"), sql`now()`);
  const { rows } = await sql<{ id: string }>`WITH target AS MATERIALIZED (
  SELECT id, state, attempts, locked_by, started_at FROM ${jobs}
   WHERE id = ${params.id}::bigint AND state IN ('queued', 'failed', 'running')
   FOR UPDATE
),
cancelled AS (
  UPDATE ${jobs} AS jobs
     SET state = 'cancelled', finished_at = now(), locked_until = NULL, updated_at = now(),
         duration_ms = CASE WHEN target.state = 'running' THEN ${ranFor} ELSE jobs.duration_ms END
    FROM target
   WHERE jobs.id = target.id
  RETURNING target.id, target.state, target.attempts, target.locked_by, target.started_at, jobs.duration_ms
),
history AS (
  INSERT INTO ${attemptsTable(schema)} ${ATTEMPT_COLUMNS}
  SELECT id, attempts, 'cancelled', locked_by, started_at, now(), duration_ms,
         'Cancelled while it ran; its outcome will be discarded', 'STINT_CANCELLED', NULL
    FROM cancelled
   WHERE state = 'running'
)
${selectAnnouncing(schema, "cancelled")}`.execute(executor);
  return rows.length > 0;
}
