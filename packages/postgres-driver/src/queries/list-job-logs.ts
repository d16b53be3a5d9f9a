import type { JobLogRecord } from "@stint/core";
import { parseLogLine, type ListAttemptsParams } from "@stint/core/driver";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { isJobId } from "./job-row";

/** `"<schema>"."job_logs"`, quoted: one row per attempt that wrote `ctx.log` lines. */
export function jobLogsTable(schema: string): RawBuilder<unknown> {
  return sql.id(schema, "job_logs");
}

interface JobLogRow {
  readonly job_id: string;
  readonly attempt: number;
  readonly lines: unknown;
  readonly dropped_lines: number;
}

/**
 * The `ctx.log` lines of each attempt of a job that logged, by attempt
 * number (a probe of `job_logs_pkey`). Empty for a job that does not
 * exist (or an id that cannot be one).
 *
 * ### SQL
 * ```sql
 * SELECT job_id, attempt, lines, dropped_lines FROM "stint"."job_logs" WHERE job_id = $1 ORDER BY attempt
 * ```
 *
 * @example
 * ```ts
 * const logs = await listJobLogs(db, "stint", { jobId: "812" });
 * ```
 */
export async function listJobLogs(executor: Kysely<any>, schema: string, params: ListAttemptsParams): Promise<readonly JobLogRecord[]> {
  if (!isJobId(params.jobId)) return Object.freeze([]);
  const { rows } = await sql<JobLogRow>`SELECT job_id, attempt, lines, dropped_lines FROM ${jobLogsTable(schema)}
 WHERE job_id = ${params.jobId}::bigint
 ORDER BY attempt`.execute(executor);
  return Object.freeze(
    rows.map((row) =>
      Object.freeze({
        jobId: String(row.job_id),
        attempt: row.attempt,
        lines: Object.freeze((Array.isArray(row.lines) ? row.lines : []).map(parseLogLine)),
        droppedLines: row.dropped_lines,
      }),
    ),
  );
}
