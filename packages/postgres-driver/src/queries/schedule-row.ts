import type { ScheduleRecord } from "@stint/core/driver";
import { sql, type RawBuilder } from "kysely";
import { nullableTimestamp, timestampValue } from "./timestamp-value";

/** `"<schema>"."schedules"`, quoted. */
export function schedulesTable(schema: string): RawBuilder<unknown> {
  return sql.id(schema, "schedules");
}

/** A row of `schedules` as {@link SCHEDULE_COLUMNS} selects it (the payload as JSON text). */
export interface ScheduleRow {
  readonly name: string;
  readonly queue: string;
  readonly cron: string;
  readonly time_zone: string;
  readonly payload_json: string;
  readonly catch_up: number;
  readonly enabled: boolean;
  readonly priority: number;
  readonly max_attempts: number;
  readonly timeout_ms: number | null;
  readonly next_run_at: Date | number;
  readonly last_fired_at: Date | number | null;
  readonly updated_at: Date | number;
}

/** The select list of a {@link ScheduleRow}. */
export const SCHEDULE_COLUMNS: RawBuilder<unknown> = sql`name, queue, cron, time_zone, payload::text AS payload_json, catch_up,
       enabled, priority, max_attempts, timeout_ms, next_run_at, last_fired_at, updated_at`;

/** Maps a row to a `ScheduleRecord`. */
export function toScheduleRecord(row: ScheduleRow): ScheduleRecord {
  return Object.freeze({
    name: row.name,
    queue: row.queue,
    cron: row.cron,
    timeZone: row.time_zone,
    payloadJson: row.payload_json,
    catchUp: row.catch_up,
    enabled: row.enabled,
    priority: row.priority,
    maxAttempts: row.max_attempts,
    timeoutMs: row.timeout_ms,
    nextRunAt: timestampValue(row.next_run_at),
    lastFiredAt: nullableTimestamp(row.last_fired_at),
    updatedAt: timestampValue(row.updated_at),
  });
}

/**
 * The dedupe key of one fire of a schedule: `schedule:<name>:<fire time as
 * ISO 8601 in UTC>`, so every process that enqueues that fire names it the same.
 *
 * @example
 * ```ts
 * scheduleDedupeKey("nightly-report", new Date("2025-03-01T02:00:00Z")); // "schedule:nightly-report:2025-03-01T02:00:00.000Z"
 * ```
 */
export function scheduleDedupeKey(name: string, fireAt: Date): string {
  return `schedule:${name}:${fireAt.toISOString()}`;
}
