import type { NewJob } from "../store/job-store";
import type { ScheduleSpec } from "../store/schedule-store";

/**
 * The dedupe key of one fire of a schedule: `schedule:<name>:<fire time as
 * ISO 8601 in UTC>`, so every process (and every store) that enqueues that
 * fire names it the same.
 *
 * @example
 * ```ts
 * scheduleDedupeKey("nightly-report", new Date("2025-03-01T02:00:00Z")); // "schedule:nightly-report:2025-03-01T02:00:00.000Z"
 * ```
 */
export function scheduleDedupeKey(name: string, fireAt: Date): string {
  return `schedule:${name}:${fireAt.toISOString()}`;
}

/**
 * The job one fire of a schedule enqueues: the schedule's queue, payload
 * and job settings, due at the fire time, with the fire's dedupe key.
 *
 * @example
 * ```ts
 * const jobs = plan.fires.map((fireAt) => scheduleFireJob(schedule, fireAt));
 * ```
 */
export function scheduleFireJob(schedule: ScheduleSpec, fireAt: Date): NewJob {
  return {
    queue: schedule.queue,
    payloadJson: schedule.payloadJson,
    priority: schedule.priority,
    maxAttempts: schedule.maxAttempts,
    timeoutMs: schedule.timeoutMs,
    runAt: fireAt,
    delayMs: 0,
    dedupeKey: scheduleDedupeKey(schedule.name, fireAt),
  };
}
