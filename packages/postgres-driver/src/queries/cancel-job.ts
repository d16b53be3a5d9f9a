import type { JobIdParams } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { cancelNotice } from "../cancel-notice";
import { wakeupChannel } from "../wakeup-channel";
import { ATTEMPT_COLUMNS, attemptsTable, millisecondsBetween } from "./attempt-history";
import { isJobId, jobsTable } from "./job-row";
import { selectAnnouncing } from "./announce-finished";
import { joinNotifying } from "./notify-job-events";
import { moveToFinished } from "./finished-jobs";

/**
 * Cancels a job that has not finished (`queued`, `failed` or `running`):
 * it moves from `jobs` to `finished_jobs` (see `moveToFinished`) as
 * `cancelled`, `finished_at = now()`, lease cleared (`locked_by` kept: it
 * names the worker that held a running attempt). The fence
 * refuses a running attempt's outcome from then on; the same statement
 * gives it a `cancelled` history row and the job its `duration_ms` (the
 * database clock's, since the claim), tells the job's waiters (see
 * `announceFinished`), and tells the attempt's worker to stop its handler:
 * a notification on the schema's wake-up channel (see `wakeupChannel`)
 * whose payload is a cancel notice, `!cancel {"id", "attempt", "queue",
 * "workerId"}` (see `cancelNotice`; `!` never starts a queue name, so no
 * listener takes it for a wake-up). A worker that hears no notifications
 * learns of the cancel from its next heartbeat (see `extendLeases`).
 * Returns false when the job does not exist or has already finished.
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
  SELECT id, state, queue, attempts, locked_by, started_at FROM ${jobs}
   WHERE id = ${params.id}::bigint AND state IN ('blocked', 'queued', 'failed', 'running')
   FOR UPDATE
),
removed AS (
  DELETE FROM ${jobs} AS jobs
   USING target
   WHERE jobs.id = target.id
  RETURNING jobs.*, CASE WHEN target.state = 'running' THEN ${ranFor} ELSE jobs.duration_ms END AS cancelled_duration_ms
),
moved AS (
  ${moveToFinished(schema, "removed", {
    state: sql`'cancelled'`,
    finished_at: sql`now()`,
    locked_until: sql`NULL`,
    updated_at: sql`now()`,
    duration_ms: sql`removed.cancelled_duration_ms`,
  })}
),
cancelled AS (
  SELECT id, state, queue, attempts, locked_by, started_at, cancelled_duration_ms AS duration_ms FROM removed
),
history AS (
  INSERT INTO ${attemptsTable(schema)} ${ATTEMPT_COLUMNS}
  SELECT id, attempts, 'cancelled', locked_by, started_at, now(), duration_ms,
         'Cancelled while it ran; its handler was told to stop', 'STINT_CANCELLED', NULL
    FROM cancelled
   WHERE state = 'running'
),
told AS (
  SELECT pg_notify(${wakeupChannel(schema)}, ${cancelNotice("cancelled")}) FROM cancelled WHERE state = 'running'
)
${selectAnnouncing(schema, "cancelled")}
 CROSS JOIN (SELECT count(*) FROM told) AS owner_told
 ${joinNotifying(schema, sql`cancelled`, { kind: sql`'cancelled'`, attempt: sql.ref("attempts") })}`.execute(executor);
  return rows.length > 0;
}
