import type { ScheduleRecord } from "@stint/core";
import type { SchedulePlan, ScheduleSpec } from "@stint/core/driver";

export const MINUTE = 60_000;

/** The schedule grace of the tests' ticks: a day, as by default. */
export const DAY = 24 * 60 * MINUTE;

/** A schedule spec with plain defaults. */
export function scheduleSpec(name: string, overrides: Partial<ScheduleSpec> = {}): ScheduleSpec {
  return {
    name,
    queue: `${name}-queue`,
    cron: "* * * * *",
    timeZone: "UTC",
    payloadJson: JSON.stringify({ schedule: name }),
    catchUp: 1,
    enabled: true,
    priority: 0,
    maxAttempts: 3,
    timeoutMs: null,
    ...overrides,
  };
}

/** `firstRunAt` that makes every new schedule due a minute ago. */
export function dueAMinuteAgo(_spec: ScheduleSpec, now: Date): Date {
  return new Date(now.getTime() - MINUTE);
}

/**
 * A plan that owes three fires (two minutes before `next_run_at`, one
 * minute before, and `next_run_at` itself) and fires next in an hour.
 * It depends only on the stored row, so every process plans the same fires.
 */
export function threeFiresThenAnHour(schedule: ScheduleRecord, now: Date): SchedulePlan {
  const next = schedule.nextRunAt.getTime();
  return {
    fires: [new Date(next - 2 * MINUTE), new Date(next - MINUTE), new Date(next)],
    nextRunAt: new Date(now.getTime() + 60 * MINUTE),
  };
}
