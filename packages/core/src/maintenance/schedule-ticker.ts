import { planFires } from "../schedule/cron-plan";
import { checkScheduleGrace } from "../schedule/schedule-grace";
import type { ScheduleFire, SchedulePlan, ScheduleRecord, ScheduleStore } from "../store/schedule-store";
import { coerceError } from "../errors/coerce-error";
import { DEFAULT_SCHEDULE_GRACE_MS } from "../limits";
import type { Logger } from "../logging/logger";
import type { MaintenanceService } from "./maintenance-service";

/** Options of {@link ScheduleTicker}. */
export interface ScheduleTickerOptions {
  /** How often the maintenance loop ticks, in ms. Default 1,000. */
  readonly everyMs?: number;
  /** Where a schedule whose cron no longer parses is reported. */
  readonly log?: Logger;
  /**
   * A schedule declared in code fires only while some process declared it
   * within this many ms (see `ScheduleDeclarer`); runtime schedules always
   * fire. A minute to a year; default a day.
   */
  readonly graceMs?: number;
}

/**
 * Enqueues the due fires of the live periodic schedules: those created at
 * run time, and those the code declared within the grace — a schedule
 * deleted from the code stops once no process has declared it for that
 * long. Any number of processes may tick at once: the store locks each due
 * schedule while it enqueues its fires and advances it, and each fire
 * carries the dedupe key `schedule:<name>:<fire time>`, so every fire is
 * enqueued once.
 *
 * @example
 * ```ts
 * const ticker = new ScheduleTicker(scheduleStore, { graceMs: 86_400_000 });
 * await new ScheduleDeclarer(scheduleStore, [WeeklyReportSchedule]).declare();
 * await ticker.tick(); // the fires enqueued now
 * ```
 */
export class ScheduleTicker implements MaintenanceService {
  readonly name = "schedules";
  readonly everyMs: number;
  /** The grace it fires code schedules within. */
  readonly graceMs: number;
  readonly #store: ScheduleStore;
  readonly #log: Logger | undefined;

  /** Throws a `ConfigError` naming `graceMs` when it is not a minute to a year. */
  constructor(store: ScheduleStore, options: ScheduleTickerOptions = {}) {
    this.#store = store;
    this.#log = options.log;
    this.everyMs = options.everyMs ?? 1_000;
    this.graceMs = checkScheduleGrace("graceMs", options.graceMs ?? DEFAULT_SCHEDULE_GRACE_MS);
  }

  /** Enqueues what is due now; resolves with the fires. */
  tick(): Promise<readonly ScheduleFire[]> {
    return this.#store.fireDueSchedules({ limit: 100, graceMs: this.graceMs, plan: (schedule, now) => this.#plan(schedule, now) });
  }

  /** A schedule whose stored cron no longer parses (edited by hand) is put off for an hour, not allowed to block the others. */
  #plan(schedule: ScheduleRecord, now: Date): SchedulePlan {
    try {
      return planFires(schedule, now);
    } catch (thrown) {
      this.#log?.error(`Schedule ${schedule.name} cannot be planned and is put off for an hour: ${coerceError(thrown).message}`);
      return { fires: [], nextRunAt: new Date(now.getTime() + 3_600_000) };
    }
  }

  async runOnce(): Promise<string> {
    const fires = await this.tick();
    const enqueued = fires.filter((fire) => !fire.duplicate).length;
    return `enqueued ${enqueued} scheduled job${enqueued === 1 ? "" : "s"}`;
  }
}
