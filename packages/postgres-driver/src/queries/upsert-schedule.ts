import { ScheduleConflictError, type UpsertScheduleResult } from "@stint/core";
import type { UpsertScheduleParams } from "@stint/core/driver";
import type { Kysely } from "kysely";
import { toScheduleRecord } from "./schedule-row";
import { writeSchedules } from "./write-schedules";

/**
 * Creates or changes one `runtime` schedule (see {@link writeSchedules}
 * for the statement): `next_run_at` is kept unless the cron expression or
 * time zone changed, `declared_at` says when it was last written. When a
 * `code` schedule holds the name the upsert writes nothing and returns no
 * row, and this rejects with a `ScheduleConflictError`.
 *
 * ### SQL
 * ```sql
 * SELECT now() AS now;
 * INSERT INTO "stint"."schedules" AS s (…, origin, declared_at) SELECT …, 'runtime', now() FROM unnest(…) …
 * ON CONFLICT (name) DO UPDATE SET …, declared_at = now() WHERE s.origin = excluded.origin
 * RETURNING name, …, created_at = now() AS created;
 * ```
 *
 * @example
 * ```ts
 * const { schedule, created } = await upsertSchedule(db, "stint", { schedule: spec, firstRunAt });
 * ```
 */
export async function upsertSchedule(executor: Kysely<any>, schema: string, params: UpsertScheduleParams): Promise<UpsertScheduleResult> {
  const [row] = await writeSchedules(executor, schema, { specs: [params.schedule], origin: "runtime", firstRunAt: params.firstRunAt });
  if (row === undefined) throw new ScheduleConflictError(params.schedule.name, "code");
  return Object.freeze({ schedule: toScheduleRecord(row), created: row.created });
}
