import type { InjectionToken } from "tsyringe";
import type { Logger } from "../logging/logger";
import type { JobStore } from "../store/job-store";
import type { Clock } from "../time/clock";
import type { LeaderLock, WakeupSource } from "../runtime/coordination";
import type { ScheduleStore } from "../store/schedule-store";
import type { ScheduleDefinition } from "../schedule/define-schedule";
import type { AbstractQueueWorker } from "../worker/abstract-queue-worker";

/**
 * Token of the `JobStore` (registered by a driver such as
 * `registerPostgresDriver`).
 *
 * @example
 * ```ts
 * constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger) { super(store, log); }
 * ```
 */
export const JOB_STORE: InjectionToken<JobStore> = Symbol.for("stint.JobStore");

/** Token of the `Logger` (see `registerLogger`). */
export const LOGGER: InjectionToken<Logger> = Symbol.for("stint.Logger");

/** Token of the `Clock` (the system clock unless a test registers another). */
export const CLOCK: InjectionToken<Clock> = Symbol.for("stint.Clock");

/** Token under which every worker class is registered (see `registerWorkers`). */
export const WORKERS: InjectionToken<AbstractQueueWorker<any>> = Symbol.for("stint.Workers");

/** Token of the `ScheduleStore` (registered by a driver). */
export const SCHEDULE_STORE: InjectionToken<ScheduleStore> = Symbol.for("stint.ScheduleStore");

/** Token of the `WakeupSource` that lets idle workers start new jobs at once (registered by a driver). */
export const WAKEUP_SOURCE: InjectionToken<WakeupSource> = Symbol.for("stint.WakeupSource");

/** Token of the `LeaderLock` that elects the maintenance process (registered by a driver). */
export const LEADER_LOCK: InjectionToken<LeaderLock> = Symbol.for("stint.LeaderLock");

/** Token under which each declared schedule is registered (see `registerSchedules`). */
export const SCHEDULES: InjectionToken<ScheduleDefinition> = Symbol.for("stint.Schedules");
