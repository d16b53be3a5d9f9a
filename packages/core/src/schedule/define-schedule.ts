import { ConfigError } from "../errors/config-errors";
import { resolveJobDefaults, type JobDefaults, type JobDefinition } from "../job/job-definition";
import { serializePayload } from "../job/serialize-payload";
import type { ScheduleSpec } from "../store/schedule-store";
import { assertScheduleName } from "../validation/names";
import { integerOption, rejectUnknownOptions } from "../validation/option-checks";
import { parseCron } from "./cron-plan";
import { DEFAULT_MAX_PAYLOAD_BYTES, MAX_CATCH_UP } from "../limits";

/** What {@link defineSchedule} takes. */
export interface ScheduleOptions<T> {
  /** Unique name; part of each fire's dedupe key. Lower-case letters, digits and `_ . : -`. */
  readonly name: string;
  /** The job kind each fire enqueues. */
  readonly job: JobDefinition<T>;
  /** Cron expression: 5 fields, or 6 with seconds first. */
  readonly cron: string;
  /** IANA time zone the expression is read in. Default `UTC`. */
  readonly timeZone?: string;
  /** The payload of every fire. */
  readonly payload: T;
  /** After downtime, enqueue at most this many missed fires (the latest ones). Default 1. */
  readonly catchUp?: number;
  /** Default true; a disabled schedule is kept but never fires. */
  readonly enabled?: boolean;
  /** Overrides of the job kind's defaults for the jobs this schedule enqueues. */
  readonly jobOptions?: Partial<JobDefaults>;
}

/** A validated schedule, ready to be synced to the store. */
export interface ScheduleDefinition {
  readonly spec: ScheduleSpec;
}

const KEYS = ["name", "job", "cron", "timeZone", "payload", "catchUp", "enabled", "jobOptions"];

/**
 * Declares a periodic job next to its worker. Validated at once: a bad cron
 * expression or time zone throws a `ConfigError` naming the option.
 *
 * @example
 * ```ts
 * export const WeeklyReportSchedule = defineSchedule({
 *   name: "weekly-report",
 *   job: WeeklyReport,
 *   cron: "0 6 * * 1",
 *   timeZone: "Europe/Berlin",
 *   payload: { kind: "revenue" },
 * });
 * registerSchedules(container, [WeeklyReportSchedule]);
 * ```
 */
export function defineSchedule<T>(options: ScheduleOptions<T>): ScheduleDefinition {
  rejectUnknownOptions("schedule", options, KEYS);
  assertScheduleName(options.name);
  const timeZone = options.timeZone ?? "UTC";
  if (typeof options.cron !== "string") throw new ConfigError("cron", "must be a cron expression string");
  parseCron(options.cron, timeZone);
  const defaults = resolveJobDefaults(options.jobOptions ?? {}, options.job.defaults);
  const spec: ScheduleSpec = Object.freeze({
    name: options.name,
    queue: options.job.name,
    cron: options.cron,
    timeZone,
    payloadJson: serializePayload(options.payload, options.job.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES, options.job.name),
    catchUp: integerOption("catchUp", options.catchUp ?? 1, 1, MAX_CATCH_UP),
    enabled: options.enabled ?? true,
    priority: defaults.priority,
    maxAttempts: defaults.maxAttempts,
    timeoutMs: defaults.timeoutMs,
  });
  return Object.freeze({ spec });
}
