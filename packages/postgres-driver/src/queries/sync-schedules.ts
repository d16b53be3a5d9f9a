import type { SyncSchedulesParams, SyncSchedulesResult } from "@stint/core/driver";
import type { Kysely } from "kysely";
import { writeSchedules } from "./write-schedules";

/**
 * Declares the code's schedules: inserts or updates them by name as `code`
 * schedules, stamping each one's `declared_at` with the database's `now()`
 * whether its definition changed or not (see {@link writeSchedules} for the
 * statement). Schedules not given are left alone, to expire a grace after
 * their last declaration; names a `runtime` schedule holds are left alone
 * and returned as `conflicts`. The specs' names are unique
 * (`CheckedScheduleStore` refuses one given twice before any write).
 *
 * ### SQL
 * ```sql
 * SELECT now() AS now;
 * INSERT INTO "stint"."schedules" AS s (…, origin, declared_at) SELECT …, 'code', now() FROM unnest(…) …
 * ON CONFLICT (name) DO UPDATE SET …, declared_at = now() WHERE s.origin = excluded.origin
 * RETURNING name, …;
 * ```
 *
 * @example
 * ```ts
 * const { conflicts } = await syncSchedules(db, "stint", {
 *   schedules: [{ name: "nightly-report", queue: "report", cron: "0 2 * * *", timeZone: "Europe/Berlin",
 *                 payloadJson: "{}", catchUp: 1, enabled: true, priority: 0, maxAttempts: 5, timeoutMs: null }],
 *   firstRunAt: (spec, now) => nextFire(spec.cron, spec.timeZone, now),
 * });
 * ```
 */
export async function syncSchedules(executor: Kysely<any>, schema: string, params: SyncSchedulesParams): Promise<SyncSchedulesResult> {
  const written = await writeSchedules(executor, schema, { specs: params.schedules, origin: "code", firstRunAt: params.firstRunAt });
  const declared = new Set(written.map((row) => row.name));
  const conflicts = params.schedules.map((spec) => spec.name).filter((name) => !declared.has(name));
  return Object.freeze({ conflicts: Object.freeze(conflicts) });
}
