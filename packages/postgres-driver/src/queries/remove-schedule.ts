import type { ScheduleRecord } from "@stint/core";
import type { RemoveScheduleParams } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { SCHEDULE_COLUMNS, schedulesTable, toScheduleRecord, type ScheduleRow } from "./schedule-row";

/**
 * Deletes the schedule of that name, whatever its origin, and returns it
 * (`undefined` when there was none). Jobs it already enqueued stay.
 *
 * ### SQL
 * ```sql
 * DELETE FROM "stint"."schedules" WHERE name = $1 RETURNING name, queue, cron, …
 * ```
 *
 * @example
 * ```ts
 * const removed = await removeSchedule(db, "stint", { name: "nightly-report" });
 * removed?.origin; // "code"
 * ```
 */
export async function removeSchedule(executor: Kysely<any>, schema: string, params: RemoveScheduleParams): Promise<ScheduleRecord | undefined> {
  const { rows } = await sql<ScheduleRow>`DELETE FROM ${schedulesTable(schema)} WHERE name = ${params.name}
RETURNING ${SCHEDULE_COLUMNS}`.execute(executor);
  return rows[0] === undefined ? undefined : toScheduleRecord(rows[0]);
}
