import type { CancelJobsParams } from "@stint/core/driver";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { announceFinished } from "./announce-finished";
import { notifyJobEvents } from "./notify-job-events";
import { jobsTable } from "./job-row";
import { moveToFinished, type JobValues } from "./finished-jobs";

/**
 * Cancels up to `limit` jobs of a queue that wait in `states` (`queued`,
 * `failed`: no worker holds them) in one statement, as `cancelJob` would
 * (moved to `finished_jobs` as `cancelled`, `finished_at = now()`), in the claim index's order (jobs
 * without a group first, then group by group, each in claim order); returns how many,
 * and tells their waiters (see `announceFinished`). Candidates come from
 * `jobs_claim_idx` (the literal `state IN ('queued', 'failed')` lets the
 * planner use the partial index; `$2` narrows it) and are locked `FOR
 * UPDATE SKIP LOCKED`: a job a worker is claiming at that moment is left
 * to it, and PostgreSQL rechecks the conditions of each row it locks, so a
 * job claimed just before is not cancelled. Running jobs are cancelled one
 * by one (`cancelJob`), whose statement tells their workers.
 *
 * ### SQL
 * ```sql
 * WITH picked AS MATERIALIZED (
 *   SELECT id FROM "stint"."jobs"
 *    WHERE queue = $1 AND state IN ('queued', 'failed') AND state = ANY($2::text[])
 *    ORDER BY group_key, priority DESC, run_at, id
 *    LIMIT $3
 *    FOR UPDATE SKIP LOCKED),
 * cancelled AS (DELETE FROM "stint"."jobs" AS jobs USING picked WHERE jobs.id = picked.id RETURNING jobs.*),
 * moved AS (
 *   INSERT INTO "stint"."finished_jobs" (…)
 *   SELECT …, 'cancelled', now() AS finished_at, NULL AS locked_until, … FROM cancelled)
 * SELECT count(*) AS cancelled, "stint".notify_awaited($4, array_agg(id)) AS announced,
 *        <only while a listener is live> "stint".notify_job_events(array_agg('cancelled'), array_agg(id), …) AS notified FROM cancelled
 * ```
 *
 * @example
 * ```ts
 * const cancelled = await cancelJobs(db, "stint", { queue: "send-invoice", states: ["queued"], limit: 1_000 });
 * ```
 */
export async function cancelJobs(executor: Kysely<any>, schema: string, params: CancelJobsParams): Promise<number> {
  const pick = sql`SELECT id FROM ${jobsTable(schema)}
   WHERE queue = ${params.queue} AND state IN ('queued', 'failed') AND state = ANY(${[...params.states]}::text[])
   ORDER BY group_key, priority DESC, run_at, id
   LIMIT ${params.limit}::integer
   FOR UPDATE SKIP LOCKED`;
  return cancelPicked(executor, schema, pick, {});
}

/**
 * Cancels the waiting jobs `pick` selects (and locks) in one statement:
 * deleted from `jobs`, moved to `finished_jobs` as `cancelled` with
 * `finished_at = now()` and any other `values`, their waiters and the
 * event listeners told. Returns how many. The one shape of every bulk
 * cancel (`cancelJobs`, `cancelExpiredJobs`).
 *
 * @example
 * ```ts
 * await cancelPicked(db, "stint", sql`SELECT id FROM … FOR UPDATE SKIP LOCKED`, { error_code: sql`'STINT_EXPIRED'` });
 * ```
 */
export async function cancelPicked(executor: Kysely<any>, schema: string, pick: RawBuilder<unknown>, values: JobValues): Promise<number> {
  const jobs = jobsTable(schema);
  const { rows } = await sql<{ cancelled: string }>`WITH picked AS MATERIALIZED (
  ${pick}
),
cancelled AS (
  DELETE FROM ${jobs} AS jobs
   USING picked
   WHERE jobs.id = picked.id
  RETURNING jobs.*
),
moved AS (
  ${moveToFinished(schema, "cancelled", { state: sql`'cancelled'`, finished_at: sql`now()`, locked_until: sql`NULL`, updated_at: sql`now()`, ...values })}
)
SELECT count(*) AS cancelled, ${announceFinished(schema, sql`array_agg(id)`)} AS announced,
       ${notifyJobEvents(schema, sql`cancelled`, { kind: sql`'cancelled'`, attempt: sql.ref("attempts") })} AS notified
  FROM cancelled`.execute(executor);
  return Number(rows[0]?.cancelled ?? 0);
}
