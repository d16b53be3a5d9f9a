import type { ListAttemptsParams } from "@stint/core/driver";
import type { AttemptOutcomeName, AttemptRecord } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { attemptsTable } from "./attempt-history";
import { allJobsView } from "./finished-jobs";
import { isJobId } from "./job-row";
import { nullableTimestamp } from "./timestamp-value";

interface AttemptRow {
  readonly job_id: string;
  readonly attempt: number;
  readonly outcome: AttemptOutcomeName;
  readonly worker_id: string | null;
  readonly started_at: Date | number | null;
  readonly finished_at: Date | number | null;
  readonly duration_ms: number | null;
  readonly error_message: string | null;
  readonly error_code: string | null;
  readonly error_stack: string | null;
}

/**
 * A job's attempts, oldest first: its `job_attempts` rows in the order they
 * were written, then, for a `succeeded` job, the successful attempt read
 * from the job row (`attempts`, `locked_by`, `started_at`, `finished_at`,
 * `duration_ms`), found in `finished_jobs` or, for a job that finished
 * before an upgrade moved it, in `jobs` (the view `all_jobs`: a probe of
 * each table's id index). Empty for a job that does not exist (or an id
 * that cannot be one).
 *
 * ### SQL
 * ```sql
 * SELECT job_id, attempt, outcome, worker_id, started_at, finished_at, duration_ms, error_message, error_code, error_stack
 *   FROM (SELECT …, 0 AS part, id AS seq FROM "stint"."job_attempts" WHERE job_id = $1
 *         UNION ALL
 *         SELECT id, attempts, 'succeeded', locked_by, started_at, finished_at, duration_ms, NULL, NULL, NULL, 1, 0
 *           FROM "stint"."all_jobs" WHERE id = $1 AND state = 'succeeded') AS history
 *  ORDER BY part, seq
 * ```
 *
 * @example
 * ```ts
 * const attempts = await listAttempts(db, "stint", { jobId: "812" });
 * ```
 */
export async function listAttempts(executor: Kysely<any>, schema: string, params: ListAttemptsParams): Promise<readonly AttemptRecord[]> {
  if (!isJobId(params.jobId)) return Object.freeze([]);
  const { rows } = await sql<AttemptRow>`SELECT job_id, attempt, outcome, worker_id, started_at, finished_at, duration_ms,
       error_message, error_code, error_stack
  FROM (SELECT job_id, attempt, outcome, worker_id, started_at, finished_at, duration_ms,
               error_message, error_code, error_stack, 0 AS part, id AS seq
          FROM ${attemptsTable(schema)}
         WHERE job_id = ${params.jobId}::bigint
        UNION ALL
        SELECT id, attempts, 'succeeded', locked_by, started_at, finished_at, duration_ms, NULL, NULL, NULL, 1, 0
          FROM ${allJobsView(schema)}
         WHERE id = ${params.jobId}::bigint AND state = 'succeeded') AS history
 ORDER BY part, seq`.execute(executor);
  return Object.freeze(rows.map(toAttemptRecord));
}

function toAttemptRecord(row: AttemptRow): AttemptRecord {
  const failed = row.error_message !== null || row.error_code !== null || row.error_stack !== null;
  return Object.freeze({
    jobId: String(row.job_id),
    attempt: row.attempt,
    outcome: row.outcome,
    workerId: row.worker_id,
    startedAt: nullableTimestamp(row.started_at),
    finishedAt: nullableTimestamp(row.finished_at),
    durationMs: row.duration_ms,
    error: failed ? Object.freeze({ message: row.error_message, code: row.error_code, stack: row.error_stack }) : null,
  });
}
