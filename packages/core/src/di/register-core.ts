import type { DependencyContainer } from "tsyringe";
import { ConfigError } from "../errors/config-errors";
import { createLogger, type LoggerOptions } from "../logging/create-logger";
import type { Logger } from "../logging/logger";
import { systemClock, type Clock } from "../time/clock";
import type { ScheduleDefinition } from "../schedule/define-schedule";
import { CLOCK, LOGGER, SCHEDULES, WORKERS } from "./tokens";
import type { AnyQueueWorker, CheckedWorkerClass, WorkerClass } from "./worker-class";
import { workerProvider } from "./worker-provider";

export type { AnyQueueWorker, WorkerClass } from "./worker-class";

/**
 * Registers the logger (a winston logger built from `options`, or the one
 * given) and the clock. Call once in the composition root.
 *
 * @example
 * ```ts
 * registerLogger(container, { level: "debug" });
 * ```
 */
export function registerLogger(container: DependencyContainer, options: LoggerOptions | { readonly logger: Logger } = {}): Logger {
  const logger = "logger" in options ? options.logger : createLogger(options);
  container.registerInstance(LOGGER, logger);
  if (!container.isRegistered(CLOCK)) container.registerInstance<Clock>(CLOCK, systemClock);
  return logger;
}

/**
 * Registers worker classes under the {@link WORKERS} token, so a runner can
 * find them by queue name. Registration constructs nothing, but it checks
 * that each class says what its constructor takes, in one of two ways:
 *
 * - tsyringe's decorators: `@injectable()` on the class and `@inject(TOKEN)`
 *   on each constructor parameter (TypeScript with `experimentalDecorators`);
 * - a static `inject` list of tokens, one per constructor parameter, in
 *   order: no decorator syntax, so it works in plain JavaScript. In
 *   TypeScript, declare it `as const` and the compiler checks it against
 *   the constructor's parameters.
 *
 * A class that takes parameters but declares neither, or whose `inject`
 * list is not an array of tokens or is shorter than its parameters, is a
 * `ConfigError` naming the class. An `inject` list's tokens are resolved
 * from the resolving container (a child's registrations win), and the
 * container's `dispose()` does not call such a worker's `dispose()`.
 *
 * @example
 * ```ts
 * registerWorkers(container, [SendInvoiceWorker, WeeklyReportWorker]);
 * const worker = resolveWorker(container, "send-invoice");
 * ```
 *
 * @example
 * ```js
 * // Plain JavaScript: the constructor's dependencies in a static list.
 * class SendWelcomeWorker extends SchemaQueueWorker {
 *   static inject = [JOB_STORE, LOGGER];
 *   job = SendWelcome;
 *   constructor(store, log) {
 *     super(store, log, { concurrency: 4 });
 *   }
 *   async processItem(item) {
 *     await mailer.welcome(item.email);
 *   }
 * }
 * registerWorkers(container, [SendWelcomeWorker]);
 * ```
 */
export function registerWorkers<const Workers extends readonly WorkerClass[]>(
  container: DependencyContainer,
  workers: Workers & { readonly [Index in keyof Workers]: CheckedWorkerClass<Workers[Index]> },
): void {
  if (workers.length === 0) throw new ConfigError("workers", "register at least one worker class");
  const providers = workers.map((worker: unknown) => {
    if (typeof worker !== "function") throw new ConfigError("workers", `expected a class, got ${typeof worker}`);
    return workerProvider(worker as WorkerClass);
  });
  // Every class is checked before any is registered: a refused list leaves the container as it was.
  for (const provider of providers) {
    if ("useFactory" in provider) container.register(WORKERS, { useFactory: provider.useFactory });
    else container.register(WORKERS, { useClass: provider.useClass as never });
  }
}

/**
 * Constructs every registered worker and checks that no two claim the same
 * queue. Constructors start nothing, so this is cheap. A decorated class
 * that tsyringe cannot construct (`@injectable()` forgotten) is a
 * `ConfigError` that says so.
 */
export function resolveWorkers(container: DependencyContainer): readonly AnyQueueWorker[] {
  if (!container.isRegistered(WORKERS, true)) throw new ConfigError("workers", "no worker is registered (call registerWorkers)");
  const workers = resolveAllWorkers(container);
  const seen = new Set<string>();
  for (const worker of workers) {
    if (seen.has(worker.queue)) throw new ConfigError("workers", `two registered workers claim the queue "${worker.queue}"`);
    seen.add(worker.queue);
  }
  return workers;
}

/**
 * tsyringe's words for a class it has no constructor information for. For a
 * worker, most often: its parameters carry `@inject`, so registration took
 * it as decorated, but `@injectable()` is missing from the class itself.
 */
const TYPE_INFO_UNKNOWN = /^TypeInfo not known for "(.*)"$/;

function resolveAllWorkers(container: DependencyContainer): AnyQueueWorker[] {
  try {
    return container.resolveAll(WORKERS);
  } catch (error) {
    const unknown = error instanceof Error ? TYPE_INFO_UNKNOWN.exec(error.message) : null;
    if (unknown === null) throw error;
    throw new ConfigError(
      "workers",
      `tsyringe cannot construct ${unknown[1]} (${unknown[0]}): a class whose constructor takes parameters needs @injectable() on the class, beside @inject(TOKEN) on each parameter; ` +
        `a worker class may declare static inject = [TOKEN, ...] instead, one token per parameter, in order (for example static inject = [JOB_STORE, LOGGER])`,
    );
  }
}

/**
 * The registered worker of `queue`; a `ConfigError` listing the known
 * queues when there is none.
 *
 * @example
 * ```ts
 * const summary = await resolveWorker(container, "send-invoice").start();
 * ```
 */
export function resolveWorker(container: DependencyContainer, queue: string): AnyQueueWorker {
  const workers = resolveWorkers(container);
  const worker = workers.find((candidate) => candidate.queue === queue);
  if (worker === undefined) {
    throw new ConfigError("queue", `no worker is registered for "${queue}" (registered: ${workers.map((w) => w.queue).join(", ")})`);
  }
  return worker;
}

/**
 * Registers periodic schedules (from `defineSchedule`). A run syncs them to
 * the store at start and fires them when due.
 *
 * @example
 * ```ts
 * registerSchedules(container, [WeeklyReportSchedule, NightlyCleanupSchedule]);
 * ```
 */
export function registerSchedules(container: DependencyContainer, schedules: readonly ScheduleDefinition[]): void {
  const names = new Set<string>();
  for (const schedule of schedules) {
    if (names.has(schedule.spec.name)) throw new ConfigError("schedules", `two schedules are named "${schedule.spec.name}"`);
    names.add(schedule.spec.name);
    container.register(SCHEDULES, { useValue: schedule });
  }
}

/** The registered schedules (none when nothing was registered). */
export function resolveSchedules(container: DependencyContainer): readonly ScheduleDefinition[] {
  return container.isRegistered(SCHEDULES, true) ? container.resolveAll(SCHEDULES) : [];
}
