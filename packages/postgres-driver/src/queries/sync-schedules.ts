import type { SyncSchedulesParams, ScheduleSpec } from "@stint/core/driver";
import { ConfigError } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { schedulesTable } from "./schedule-row";

/**
 * Inserts or updates the given schedules by name; schedules not given are
 * left alone. Reads the database's `now()` once, computes `firstRunAt` for
 * every spec in JavaScript, then writes them all with one upsert: a new row
 * takes that `next_run_at`; an existing row keeps its own unless its cron
 * expression or time zone changed, so restarting every process (each
 * syncing the same specs) neither skips nor repeats a fire. A row whose
 * spec did not change is not rewritten.
 *
 * Rows are written in name order, so processes syncing at the same time
 * wait for each other instead of deadlocking. The specs' names are unique
 * (`CheckedScheduleStore` refuses one given twice before any write).
 *
 * ### SQL
 * ```sql
 * SELECT now() AS now;
 * INSERT INTO "stint"."schedules" AS s (name, queue, cron, time_zone, payload, …, next_run_at)
 * SELECT name, queue, cron, time_zone, payload::jsonb, …, next_run_at
 *   FROM unnest($1::text[], $2::text[], …, $11::timestamptz[]) AS spec(name, queue, …, next_run_at)
 *  ORDER BY name COLLATE "C"
 * ON CONFLICT (name) DO UPDATE
 *    SET queue = excluded.queue, …,
 *        next_run_at = CASE WHEN s.cron = excluded.cron AND s.time_zone = excluded.time_zone
 *                           THEN s.next_run_at ELSE excluded.next_run_at END,
 *        updated_at = now()
 *  WHERE (s.queue, s.cron, …) IS DISTINCT FROM (excluded.queue, excluded.cron, …)
 * ```
 *
 * @example
 * ```ts
 * await syncSchedules(db, "stint", {
 *   schedules: [{ name: "nightly-report", queue: "report", cron: "0 2 * * *", timeZone: "Europe/Berlin",
 *                 payloadJson: "{}", catchUp: 1, enabled: true, priority: 0, maxAttempts: 5, timeoutMs: null }],
 *   firstRunAt: (spec, now) => nextFire(spec.cron, spec.timeZone, now),
 * });
 * ```
 */
export async function syncSchedules(executor: Kysely<any>, schema: string, params: SyncSchedulesParams): Promise<void> {
  const specs = [...params.schedules].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (specs.length === 0) return;
  const { rows } = await sql<{ now: Date }>`SELECT now() AS now`.execute(executor);
  const now = rows[0]?.now as Date;
  const firstRuns = specs.map((spec) => checkedDate(params.firstRunAt(spec, now), spec.name));
  const column = <T>(pick: (spec: ScheduleSpec) => T): T[] => specs.map(pick);
  await sql`INSERT INTO ${schedulesTable(schema)} AS s
       (name, queue, cron, time_zone, payload, catch_up, enabled, priority, max_attempts, timeout_ms, next_run_at)
SELECT name, queue, cron, time_zone, payload::jsonb, catch_up, enabled, priority, max_attempts, timeout_ms, next_run_at
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
       updated_at = now()
 WHERE (s.queue, s.cron, s.time_zone, s.payload, s.catch_up, s.enabled, s.priority, s.max_attempts, s.timeout_ms)
       IS DISTINCT FROM
       (excluded.queue, excluded.cron, excluded.time_zone, excluded.payload, excluded.catch_up, excluded.enabled,
        excluded.priority, excluded.max_attempts, excluded.timeout_ms)`.execute(executor);
}

function checkedDate(value: unknown, name: string): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new ConfigError("firstRunAt", `must return a valid Date, got ${String(value)} for schedule ${JSON.stringify(name)}`);
  }
  return value;
}
