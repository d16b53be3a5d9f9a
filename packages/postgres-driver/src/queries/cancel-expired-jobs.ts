import type { CancelExpiredJobsParams, DeleteClosedWindowsParams } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { cancelPicked } from "./cancel-jobs";
import { jobsTable } from "./job-row";

/**
 * Cancels up to `limit` waiting jobs whose `start_by` has passed, oldest
 * deadline first, as `cancelJobs` does (moved to `finished_jobs` as
 * `cancelled`, waiters told) with `error_code` `STINT_EXPIRED` and a
 * `last_error` naming the deadline; returns how many. Candidates come from
 * `jobs_start_by_idx` (partial on waiting jobs with a deadline, so a
 * database where no job has one reads an empty index) and are locked `FOR
 * UPDATE SKIP LOCKED`; the claim never takes such a job, so this only
 * settles them.
 *
 * ### SQL
 * ```sql
 * WITH picked AS MATERIALIZED (
 *   SELECT id FROM "stint"."jobs"
 *    WHERE start_by <= now() AND state IN ('queued', 'failed') [AND queue = ANY($1)]
 *    ORDER BY start_by LIMIT $2 FOR UPDATE SKIP LOCKED),
 * expired AS (DELETE FROM "stint"."jobs" AS jobs USING picked WHERE jobs.id = picked.id RETURNING jobs.*),
 * moved AS (INSERT INTO "stint"."finished_jobs" (…) SELECT …, 'cancelled', 'STINT_EXPIRED', 'Not started by …' … FROM expired)
 * SELECT count(*) …
 * ```
 *
 * @example
 * ```ts
 * const cancelled = await cancelExpiredJobs(db, "stint", { limit: 1_000 });
 * ```
 */
export async function cancelExpiredJobs(executor: Kysely<any>, schema: string, params: CancelExpiredJobsParams): Promise<number> {
  const inQueues = params.queues === undefined ? sql`` : sql`AND queue = ANY(${[...params.queues]}::text[])`;
  const pick = sql`SELECT id FROM ${jobsTable(schema)}
   WHERE start_by <= now() AND state IN ('queued', 'failed') ${inQueues}
   ORDER BY start_by
   LIMIT ${params.limit}::integer
   FOR UPDATE SKIP LOCKED`;
  return cancelPicked(executor, schema, pick, {
    error_code: sql`'STINT_EXPIRED'`,
    last_error: sql`'Not started by ' || to_char(cancelled.start_by AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || ', its start-by deadline: cancelled without running.'`,
  });
}

/**
 * Deletes up to `limit` unique windows that have closed (their `until` has
 * passed), of `queues` when given, from `unique_windows_until_idx`;
 * returns how many. An enqueue of a closed window's key reuses its row, so
 * this only keeps the table the size of the open windows. The loop-mode
 * expiry sweep calls it for every queue, a once-mode run for its own
 * queues, and `stint prune` until none is left.
 *
 * ### SQL
 * ```sql
 * WITH closed AS (
 *   DELETE FROM "stint"."unique_windows" AS w
 *    WHERE (w.queue, w.key) IN (SELECT queue, key FROM "stint"."unique_windows"
 *      WHERE until <= now() [AND queue = ANY($1)] ORDER BY until LIMIT $2 FOR UPDATE SKIP LOCKED)
 *   RETURNING 1)
 * SELECT count(*) AS deleted FROM closed
 * ```
 *
 * @example
 * ```ts
 * const forgotten = await deleteClosedWindows(db, "stint", { queues: ["digest"], limit: 1_000 });
 * ```
 */
export async function deleteClosedWindows(executor: Kysely<any>, schema: string, params: DeleteClosedWindowsParams): Promise<number> {
  const windows = sql.id(schema, "unique_windows");
  const inQueues = params.queues === undefined ? sql`` : sql`AND queue = ANY(${[...params.queues]}::text[])`;
  const { rows } = await sql<{ deleted: string }>`WITH closed AS (
  DELETE FROM ${windows} AS w
   WHERE (w.queue, w.key) IN (SELECT queue, key FROM ${windows} WHERE until <= now() ${inQueues} ORDER BY until LIMIT ${params.limit}::integer FOR UPDATE SKIP LOCKED)
  RETURNING 1
)
SELECT count(*) AS deleted FROM closed`.execute(executor);
  return Number(rows[0]?.deleted ?? 0);
}
