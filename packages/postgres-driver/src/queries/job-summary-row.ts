import type { JobState } from "@stint/core";
import { sql, type RawBuilder } from "kysely";
import { nullableTimestamp, timestampValue } from "./timestamp-value";

/** How many characters of `last_error` a job summary carries. */
export const ERROR_HEAD_LENGTH = 300;

/**
 * One job as a list shows it: no payload, result or meta, and only the
 * start of its last error.
 */
export interface JobSummary {
  readonly id: string;
  readonly queue: string;
  readonly state: JobState;
  readonly priority: number;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly runAt: Date;
  readonly createdAt: Date;
  readonly finishedAt: Date | null;
  readonly durationMs: number | null;
  readonly errorCode: string | null;
  /** The job's group (`group` at enqueue), or `null`. */
  readonly group: string | null;
  /** The job's serial key (`serialKey` at enqueue), or `null`. */
  readonly serialKey: string | null;
  /** The first {@link ERROR_HEAD_LENGTH} characters of `last_error`, or `null`. */
  readonly errorHead: string | null;
}

/** A summary row as pg returns it. */
export interface JobSummaryRow {
  readonly id: string;
  readonly queue: string;
  readonly state: JobState;
  readonly priority: number;
  readonly attempts: number;
  readonly max_attempts: number;
  readonly run_at: Date | number;
  readonly created_at: Date | number;
  readonly finished_at: Date | number | null;
  readonly duration_ms: number | null;
  readonly error_code: string | null;
  readonly group_key: string;
  readonly serial: string | null;
  readonly error_head: string | null;
}

/** The select list of {@link JobSummaryRow}, of a table aliased `alias`. */
export function jobSummaryColumns(alias: string): RawBuilder<unknown> {
  const column = (name: string): RawBuilder<unknown> => sql.ref(`${alias}.${name}`);
  return sql`${column("id")}, ${column("queue")}, ${column("state")}, ${column("priority")}, ${column("attempts")}, ${column("max_attempts")},
       ${column("run_at")}, ${column("created_at")}, ${column("finished_at")}, ${column("duration_ms")}, ${column("error_code")},
       ${column("group_key")}, ${column("serial")}, left(${column("last_error")}, ${sql.lit(ERROR_HEAD_LENGTH)}) AS error_head`;
}

/** Maps a summary row to a {@link JobSummary}. */
export function toJobSummary(row: JobSummaryRow): JobSummary {
  return Object.freeze({
    id: String(row.id),
    queue: row.queue,
    state: row.state,
    priority: row.priority,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    runAt: timestampValue(row.run_at),
    createdAt: timestampValue(row.created_at),
    finishedAt: nullableTimestamp(row.finished_at),
    durationMs: row.duration_ms,
    errorCode: row.error_code,
    group: row.serial === null && row.group_key !== "" ? row.group_key : null,
    serialKey: row.serial === null ? null : row.group_key,
    errorHead: row.error_head,
  });
}
