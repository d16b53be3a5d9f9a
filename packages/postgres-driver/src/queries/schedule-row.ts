import type { ScheduleOrigin, ScheduleRecord } from "@stint/core";
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
  readonly origin: ScheduleOrigin;
  readonly declared_at: Date | number;
  readonly next_run_at: Date | number;
  readonly last_fired_at: Date | number | null;
  readonly updated_at: Date | number;
}

/** The select list of a {@link ScheduleRow}. */
export const SCHEDULE_COLUMNS: RawBuilder<unknown> = sql`name, queue, cron, time_zone, payload::text AS payload_json, catch_up,
       enabled, priority, max_attempts, timeout_ms, origin, declared_at, next_run_at, last_fired_at, updated_at`;

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
    origin: row.origin,
    declaredAt: timestampValue(row.declared_at),
    nextRunAt: timestampValue(row.next_run_at),
    lastFiredAt: nullableTimestamp(row.last_fired_at),
    updatedAt: timestampValue(row.updated_at),
  });
}
