import type { ScheduleOrigin } from "@stint/core";
import type { FirstRunAt, ScheduleSpec } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { SCHEDULE_COLUMNS, schedulesTable, type ScheduleRow } from "./schedule-row";

/** What {@link writeSchedules} writes. */
export interface ScheduleWrite {
  /** At most one per name. */
  readonly specs: readonly ScheduleSpec[];
  /** The origin they are written as; a stored schedule of the other origin is left alone. */
  readonly origin: ScheduleOrigin;
  readonly firstRunAt: FirstRunAt;
}

/** A row {@link writeSchedules} wrote, and whether it inserted it. */
export type WrittenSchedule = ScheduleRow & { readonly created: boolean };

/**
 * Inserts or updates schedules of one origin by name — the statement of
 * both `syncSchedules` (the code's) and `upsertSchedule` (a runtime one).
 * Reads the database's `now()` once, computes `firstRunAt` for every spec
 * in JavaScript, then writes them all with one upsert that stamps each
 * `declared_at = now()`: a new row takes that `next_run_at`; an existing
 * row keeps its own unless its cron expression or time zone changed, so
 * restarting every process (each declaring the same specs) neither skips
 * nor repeats a fire; `updated_at` moves only when the definition changed.
 * A stored row of the other origin is not touched and not returned.
 *
 * Rows are written in name order, so processes writing at the same time
 * wait for each other instead of deadlocking.
 *
 * ### SQL
 * ```sql
 * SELECT now() AS now;
 * INSERT INTO "stint"."schedules" AS s (name, queue, cron, time_zone, payload, …, next_run_at, origin, declared_at)
 * SELECT name, queue, cron, time_zone, payload::jsonb, …, next_run_at, $12, now()
 *   FROM unnest($1::text[], $2::text[], …, $11::timestamptz[]) AS spec(name, queue, …, next_run_at)
 *  ORDER BY name COLLATE "C"
 * ON CONFLICT (name) DO UPDATE
 *    SET queue = excluded.queue, …,
 *        next_run_at = CASE WHEN s.cron = excluded.cron AND s.time_zone = excluded.time_zone
 *                           THEN s.next_run_at ELSE excluded.next_run_at END,
 *        declared_at = now(),
 *        updated_at = CASE WHEN (s.queue, s.cron, …) IS DISTINCT FROM (excluded.queue, excluded.cron, …)
 *                          THEN now() ELSE s.updated_at END
 *  WHERE s.origin = excluded.origin
 * RETURNING name, queue, cron, …, created_at = now() AS created
 * ```
 *
 * @example
 * ```ts
 * const rows = await writeSchedules(db, "stint", { specs, origin: "code", firstRunAt });
 * const declared = new Set(rows.map((row) => row.name)); // the others are runtime schedules
 * ```
 */
export async function writeSchedules(executor: Kysely<any>, schema: string, write: ScheduleWrite): Promise<readonly WrittenSchedule[]> {
  const specs = [...write.specs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (specs.length === 0) return [];
  const { rows: clock } = await sql<{ now: Date }>`SELECT now() AS now`.execute(executor);
  const now = clock[0]?.now as Date;
  const firstRuns = specs.map((spec) => write.firstRunAt(spec, now));
  const column = <T>(pick: (spec: ScheduleSpec) => T): T[] => specs.map(pick);
  const { rows } = await sql<WrittenSchedule>`INSERT INTO ${schedulesTable(schema)} AS s
       (name, queue, cron, time_zone, payload, catch_up, enabled, priority, max_attempts, timeout_ms, next_run_at, origin, declared_at)
SELECT name, queue, cron, time_zone, payload::jsonb, catch_up, enabled, priority, max_attempts, timeout_ms, next_run_at, ${write.origin}::text, now()
  FROM unnest(${column((spec) => spec.name)}::text[],
              ${column((spec) => spec.queue)}::text[],
              ${column((spec) => spec.cron)}::text[],
              ${column((spec) => spec.timeZone)}::text[],
              ${column((spec) => spec.payloadJson)}::text[],
              ${column((spec) => spec.catchUp)}::integer[],
              ${column((spec) => spec.enabled)}::boolean[],
              ${column((spec) => spec.priority)}::smallint[],
              ${column((spec) => spec.maxAttempts)}::integer[],
              ${column((spec) => spec.timeoutMs)}::integer[],
              ${firstRuns}::timestamptz[])
       AS spec(name, queue, cron, time_zone, payload, catch_up, enabled, priority, max_attempts, timeout_ms, next_run_at)
 ORDER BY name COLLATE "C"
ON CONFLICT (name) DO UPDATE
   SET queue = excluded.queue, cron = excluded.cron, time_zone = excluded.time_zone, payload = excluded.payload,
       catch_up = excluded.catch_up, enabled = excluded.enabled, priority = excluded.priority,
       max_attempts = excluded.max_attempts, timeout_ms = excluded.timeout_ms,
       next_run_at = CASE WHEN s.cron = excluded.cron AND s.time_zone = excluded.time_zone
                          THEN s.next_run_at ELSE excluded.next_run_at END,
       declared_at = now(),
       updated_at = CASE WHEN (s.queue, s.cron, s.time_zone, s.payload, s.catch_up, s.enabled, s.priority, s.max_attempts, s.timeout_ms)
                              IS DISTINCT FROM
                              (excluded.queue, excluded.cron, excluded.time_zone, excluded.payload, excluded.catch_up, excluded.enabled,
                               excluded.priority, excluded.max_attempts, excluded.timeout_ms)
                         THEN now() ELSE s.updated_at END
 WHERE s.origin = excluded.origin
RETURNING ${SCHEDULE_COLUMNS}, created_at = now() AS created`.execute(executor);
  return rows;
}
