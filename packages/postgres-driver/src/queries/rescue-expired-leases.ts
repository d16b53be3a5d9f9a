import type { RescueExpiredLeasesParams, RescueResult } from "@stint/core/driver";
import { ErrorCode } from "@stint/core";
import { lineHoldInsert } from "./line-hold";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { leaseLostInsert, millisecondsBetween } from "./attempt-history";
import { deadHookInsert } from "./dead-hooks-table";
import { deadLetterIdColumn, deadLetterInsert, metaLinkingCopy } from "./dead-letter-copy";
import { jobsTable } from "./job-row";
import { announceFinished } from "./announce-finished";
import { notifyJobEvents } from "./notify-job-events";
import { moveToFinished } from "./finished-jobs";

/**
 * Handles `running` jobs whose lease expired (their worker died or lost its
 * connection) in one statement of conditional writes, never a write-back of
 * rows read earlier: those with attempts left become `failed`, due now, in
 * place; the others leave `jobs` for `finished_jobs` (see `moveToFinished`)
 * as `dead`, with `finished_at`. Both record `STINT_WORKER_DIED` and a
 * `last_error` naming the attempt that never finished; each death also
 * gets its pending `onDead` hook (see `claimDeadHooks`), so a worker of the
 * queue runs the hook although none was there when the job died. Rows
 * another transaction holds are skipped. Waiters of the jobs that became
 * `dead` are told (see `announceFinished`), and each death whose meta names
 * a dead-letter queue is copied there (see `deadLetterInsert`).
 *
 * @example
 * ```ts
 * const { retried, dead } = await rescueExpiredLeases(db, "stint", { limit: 1000 });
 * ```
 */
export async function rescueExpiredLeases(executor: Kysely<any>, schema: string, params: RescueExpiredLeasesParams): Promise<RescueResult> {
  const jobs = jobsTable(schema);
  const queueFilter = params.queues === undefined ? sql`` : sql`AND queue = ANY(${[...params.queues]}::text[])`;
  const lapsed = (next: string): RawBuilder<unknown> => sql`'The worker ' || coalesce(jobs.locked_by, 'that held the job')
                      || ' stopped (its process died or lost its database connection) during attempt '
                      || jobs.attempts || ' of ' || jobs.max_attempts
                      || ' without finishing it; its lease expired at ' || jobs.locked_until || '.' || ${sql.lit(next)}`;
  const { rows } = await sql<{ retried: string; dead: string }>`WITH expired AS MATERIALIZED (
  SELECT id, attempts, locked_by, started_at, locked_until FROM ${jobs}
   WHERE state = 'running' AND locked_until < now() ${queueFilter}
   ORDER BY locked_until
   LIMIT ${params.limit}::integer
   FOR UPDATE SKIP LOCKED
),
retried AS (
  UPDATE ${jobs} AS jobs
     SET state = 'failed',
         run_at = now(),
         error_code = ${ErrorCode.WorkerDied}::text,
         last_error = ${lapsed(" Retrying.")},
         locked_until = NULL,
         updated_at = now()
    FROM expired
   WHERE jobs.id = expired.id AND jobs.attempts < jobs.max_attempts
  RETURNING jobs.id, jobs.attempts, jobs.queue, jobs.state, jobs.error_code, jobs.last_error
),
died AS (
  DELETE FROM ${jobs} AS jobs
   USING expired
   WHERE jobs.id = expired.id AND jobs.attempts >= jobs.max_attempts
  RETURNING jobs.*, ${lapsed(" No attempts left.")} AS died_last_error, ${deadLetterIdColumn(schema)}
),
moved AS (
  ${moveToFinished(schema, "died", {
    state: sql`'dead'`,
    finished_at: sql`now()`,
    duration_ms: millisecondsBetween(sql.ref("died.started_at"), sql.ref("died.locked_until")),
    error_code: sql`${ErrorCode.WorkerDied}::text`,
    last_error: sql.ref("died.died_last_error"),
    meta: metaLinkingCopy("died"),
    locked_until: sql`NULL`,
    updated_at: sql`now()`,
  })}
),
rescued AS (
  SELECT id, attempts, queue, state, error_code, last_error FROM retried
  UNION ALL
  SELECT id, attempts, queue, 'dead', ${ErrorCode.WorkerDied}::text, died_last_error FROM died
),
history AS (
  ${leaseLostInsert(schema, "expired", sql`'the lease rescue'`)}
),
hooks AS (
  ${deadHookInsert(schema, "rescued", sql`died.state = 'dead'`)}
),
copies AS (
  ${deadLetterInsert(schema, "died", { errorCode: sql`${ErrorCode.WorkerDied}::text`, lastError: sql.ref("died.died_last_error") })}
),
holds AS (
  ${lineHoldInsert(schema, "died")}
)
SELECT count(*) FILTER (WHERE state = 'failed') AS retried,
       count(*) FILTER (WHERE state = 'dead') AS dead,
       ${announceFinished(schema, sql`array_agg(id) FILTER (WHERE state = 'dead')`)} AS announced,
       ${notifyJobEvents(schema, sql`rescued`, { kind: sql.ref("state"), attempt: sql.ref("attempts"), detail: sql`to_jsonb(error_code)` })} AS notified
  FROM rescued`.execute(executor);
  const row = rows[0];
  return Object.freeze({ retried: Number(row?.retried ?? 0), dead: Number(row?.dead ?? 0) });
}
