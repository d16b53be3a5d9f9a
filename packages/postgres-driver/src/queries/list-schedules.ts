import type { ScheduleRecord } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { SCHEDULE_COLUMNS, schedulesTable, toScheduleRecord, type ScheduleRow } from "./schedule-row";

/**
 * Every stored schedule, by name (byte order, like `COLLATE "C"`).
 *
 * ### SQL
 * ```sql
 * SELECT name, queue, cron, time_zone, payload::text AS payload_json, … FROM "stint"."schedules" ORDER BY name COLLATE "C"
 * ```
 *
 * @example
 * ```ts
 * for (const schedule of await listSchedules(db, "stint")) console.log(schedule.name, schedule.nextRunAt);
 * ```
 */
export async function listSchedules(executor: Kysely<any>, schema: string): Promise<readonly ScheduleRecord[]> {
  const { rows } = await sql<ScheduleRow>`SELECT ${SCHEDULE_COLUMNS}
  FROM ${schedulesTable(schema)}
 ORDER BY name COLLATE "C"`.execute(executor);
  return Object.freeze(rows.map(toScheduleRecord));
}
