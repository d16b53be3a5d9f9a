import { MAX_DECLARATION_INTERVAL_MS, MAX_SCHEDULE_GRACE_MS, MIN_SCHEDULE_GRACE_MS } from "../limits";
import type { ScheduleRecord } from "../store/schedule-store";
import { integerOption } from "../validation/option-checks";

/**
 * Checks a schedule grace in milliseconds (a minute to a year); throws a
 * `ConfigError` naming `option` otherwise. Returns the value.
 *
 * @example
 * ```ts
 * checkScheduleGrace("scheduleGraceMs", 12 * 3_600_000); // 43_200_000
 * ```
 */
export function checkScheduleGrace(option: string, value: unknown): number {
  return integerOption(option, value, MIN_SCHEDULE_GRACE_MS, MAX_SCHEDULE_GRACE_MS);
}

/**
 * How often a running process declares its schedules again: a quarter of
 * the grace, at most an hour, so that a live process's schedules are
 * declared several times within any grace and a few failed declarations
 * (the database away for a while) never let them expire.
 *
 * @example
 * ```ts
 * declarationIntervalMs(86_400_000); // 3_600_000: hourly with the default day
 * declarationIntervalMs(600_000);    // 150_000
 * ```
 */
export function declarationIntervalMs(graceMs: number): number {
  return Math.min(MAX_DECLARATION_INTERVAL_MS, Math.floor(graceMs / 4));
}

/**
 * Whether a stored schedule still fires: a `runtime` one always; a `code`
 * one while it was declared less than `graceMs` before `now` (the store's
 * time), as `fireDueSchedules` decides. A disabled schedule can be live:
 * `enabled` is a separate switch.
 *
 * @example
 * ```ts
 * const expired = (await scheduleStore.listSchedules()).filter((schedule) => !isScheduleLive(schedule, new Date(), 86_400_000));
 * ```
 */
export function isScheduleLive(schedule: Pick<ScheduleRecord, "origin" | "declaredAt">, now: Date | number, graceMs: number): boolean {
  const nowMs = typeof now === "number" ? now : now.getTime();
  return schedule.origin === "runtime" || schedule.declaredAt.getTime() > nowMs - graceMs;
}
