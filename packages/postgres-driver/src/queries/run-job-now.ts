import type { JobIdParams } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { wakeupChannel } from "../wakeup-channel";
import { isJobId, jobsTable } from "./job-row";
import { joinNotifying } from "./notify-job-events";
import { requeuedEvent } from "./requeue-finished";

/**
 * Makes a waiting job (`queued`, or `failed` and waiting for its retry) due
 * now: `run_at` drops to `now()` when it was later (an earlier `run_at` is
 * kept, so the job keeps its place in line), attempts are kept, the
 * queue's listeners are woken and job-event listeners told (`requeued`,
 * reason `run-now`). Returns false when the job does not exist or
 * is not waiting (running jobs and finished ones, which live in
 * `finished_jobs`, are never touched).
 *
 * ### SQL
 * ```sql
 * WITH due AS (
 *   UPDATE "stint"."jobs" SET run_at = least(run_at, now()), updated_at = now()
 *    WHERE id = $1 AND state IN ('queued', 'failed')
 *   RETURNING id, queue, attempts),
 * notified AS (SELECT pg_notify($2, queue) FROM due)
 * SELECT due.id, (SELECT count(*) FROM notified) AS notified FROM due
 *  CROSS JOIN (SELECT <only while a listener is live> "stint".notify_job_events(array_agg('requeued'), …,
 *              array_agg('"run-now"'::jsonb)) FROM due) AS notified
 * ```
 *
 * @example
 * ```ts
 * await runJobNow(db, "stint", { id: "812" }); // true: job 812 is due now
 * ```
 */
export async function runJobNow(executor: Kysely<any>, schema: string, params: JobIdParams): Promise<boolean> {
  if (!isJobId(params.id)) return false;
  const { rows } = await sql<{ id: string }>`WITH due AS (
  UPDATE ${jobsTable(schema)}
     SET run_at = least(run_at, now()), updated_at = now()
   WHERE id = ${params.id}::bigint AND state IN ('queued', 'failed')
  RETURNING id, queue, attempts
),
notified AS (
  SELECT pg_notify(${wakeupChannel(schema)}, queue) FROM due
)
SELECT due.id, (SELECT count(*) FROM notified) AS notified FROM due
 ${joinNotifying(schema, sql`due`, requeuedEvent("run-now"))}`.execute(executor);
  return rows.length === 1;
}
