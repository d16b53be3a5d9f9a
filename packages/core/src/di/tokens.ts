import type { InjectionToken } from "tsyringe";
import type { Logger } from "../logging/logger";
import type { JobStore } from "../store/job-store";
import type { Clock } from "../time/clock";
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
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const WORKERS: InjectionToken<AbstractQueueWorker<any>> = Symbol.for("stint.Workers");
