import { firstRunAt, planFires } from "../schedule/cron-plan";
import type { ScheduleDefinition } from "../schedule/define-schedule";
import type { ScheduleFire, SchedulePlan, ScheduleRecord, ScheduleStore } from "../store/schedule-store";
import { coerceError } from "../errors/coerce-error";
import type { Logger } from "../logging/logger";
import type { MaintenanceService } from "./maintenance-service";

/**
 * Enqueues the due fires of periodic schedules. Any number of processes may
 * tick at once: the store locks each due schedule while it enqueues its
 * fires and advances it, and each fire carries the dedupe key
 * `schedule:<name>:<fire time>`, so every fire is enqueued once.
 *
 * @example
 * ```ts
 * const ticker = new ScheduleTicker(scheduleStore);
 * await ticker.sync([WeeklyReportSchedule]);
 * await ticker.tick(); // the fires enqueued now
 * ```
 */
export class ScheduleTicker implements MaintenanceService {
  readonly name = "schedules";
  readonly everyMs: number;
  readonly #store: ScheduleStore;
  readonly #log: Logger | undefined;

  constructor(store: ScheduleStore, options: { readonly everyMs?: number; readonly log?: Logger } = {}) {
    this.#store = store;
    this.#log = options.log;
    this.everyMs = options.everyMs ?? 1_000;
  }

  /** Writes the declared schedules to the store (others are left alone). */
  async sync(definitions: readonly ScheduleDefinition[]): Promise<void> {
    if (definitions.length === 0) return;
    await this.#store.syncSchedules({ schedules: definitions.map((definition) => definition.spec), firstRunAt });
  }

  /** Enqueues what is due now; resolves with the fires. */
  tick(): Promise<readonly ScheduleFire[]> {
    return this.#store.fireDueSchedules({ limit: 100, plan: (schedule, now) => this.#plan(schedule, now) });
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
