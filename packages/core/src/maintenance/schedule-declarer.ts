import { coerceError } from "../errors/coerce-error";
import { ScheduleConflictError } from "../errors/schedule-errors";
import { DEFAULT_SCHEDULE_GRACE_MS } from "../limits";
import type { Logger } from "../logging/logger";
import { firstRunAt } from "../schedule/cron-plan";
import type { ScheduleDefinition } from "../schedule/define-schedule";
import { checkScheduleGrace, declarationIntervalMs } from "../schedule/schedule-grace";
import type { ScheduleStore, SyncSchedulesResult } from "../store/schedule-store";
import { systemClock, type Clock } from "../time/clock";

/** Options of {@link ScheduleDeclarer}. */
export interface ScheduleDeclarerOptions {
  /**
   * The grace the ticker fires code schedules within (a minute to a year,
   * default a day): the declarer declares again every quarter of it, at
   * most every hour.
   */
  readonly graceMs?: number;
  /** The clock its waits go through. Default the system clock. */
  readonly clock?: Clock;
  /** Where conflicts with runtime schedules and failed declarations are reported. */
  readonly log?: Logger;
}

const NO_CONFLICTS: SyncSchedulesResult = Object.freeze({ conflicts: Object.freeze([]) });

/**
 * Declares the schedules one process's code defines, so that they keep
 * firing: at start (`declare`), and again every `everyMs` for as long as
 * the process runs (`run`). Each declaration writes the definitions (the
 * newest declaration wins) and stamps them declared now, on the store's
 * clock. Every process does this, leader or not: a schedule stays live
 * while any running process of any version declares it, and expires a
 * grace after the last one stopped — after a deploy that removed it from
 * the code, however slowly that deploy rolled.
 *
 * @example
 * ```ts
 * const declarer = new ScheduleDeclarer(scheduleStore, [WeeklyReportSchedule], { graceMs: 86_400_000, log });
 * await declarer.declare();        // at start
 * void declarer.run(stop.signal);  // every hour until stopped
 * ```
 */
export class ScheduleDeclarer {
  /** How long it waits between two declarations, in ms. */
  readonly everyMs: number;
  readonly #store: ScheduleStore;
  readonly #definitions: readonly ScheduleDefinition[];
  readonly #clock: Clock;
  readonly #log: Logger | undefined;

  /** Throws a `ConfigError` naming `graceMs` when it is not a minute to a year. */
  constructor(store: ScheduleStore, definitions: readonly ScheduleDefinition[], options: ScheduleDeclarerOptions = {}) {
    this.#store = store;
    this.#definitions = Object.freeze([...definitions]);
    this.#clock = options.clock ?? systemClock;
    this.#log = options.log;
    this.everyMs = declarationIntervalMs(checkScheduleGrace("graceMs", options.graceMs ?? DEFAULT_SCHEDULE_GRACE_MS));
  }

  /**
   * Declares every schedule once; rejects when the store does. A name that
   * a runtime schedule holds is not declared: it is logged as a warning and
   * resolved among the `conflicts`.
   */
  async declare(): Promise<SyncSchedulesResult> {
    if (this.#definitions.length === 0) return NO_CONFLICTS;
    const result = await this.#store.syncSchedules({ schedules: this.#definitions.map((definition) => definition.spec), firstRunAt });
    for (const name of result.conflicts) this.#log?.warn(`Schedule not declared: ${new ScheduleConflictError(name, "runtime").message}`);
    return result;
  }

  /**
   * Declares again every `everyMs` until `signal` aborts (not at once: a
   * run declares at start). A declaration that fails is logged and tried
   * at the next interval; the grace outlasts several. Never rejects.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#definitions.length === 0) return;
    for (;;) {
      await this.#clock.sleep(this.everyMs, signal);
      if (signal.aborted) return;
      try {
        await this.declare();
      } catch (thrown) {
        this.#log?.warn(`Could not declare the schedules again (next try in ${this.everyMs} ms): ${coerceError(thrown).message}`);
      }
    }
  }
}
