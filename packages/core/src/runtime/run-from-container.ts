import type { DependencyContainer, InjectionToken } from "tsyringe";
import { ConfigError } from "../errors/config-errors";
import { resolveSchedules, resolveWorker } from "../di/register-core";
import { JOB_STORE, LEADER_LOCK, LOGGER, SCHEDULE_STORE, WAKEUP_SOURCE } from "../di/tokens";
import type { RetentionOptions } from "../maintenance/retention-pruner";
import type { ScheduleStore } from "../store/schedule-store";
import type { LeaderLock, WakeupSource } from "./coordination";
import type { RunReport } from "./run-report";
import type { WorkerEvents } from "../events/worker-events";
import type { MetricsOptions } from "../metrics/run-metrics";
import { runWorkers } from "./run-workers";

/** Options of {@link runFromContainer}. */
export interface RunFromContainerOptions {
  /** The queues to run; each must have a registered worker. */
  readonly queues: readonly string[];
  readonly mode: "once" | "loop";
  readonly signal?: AbortSignal;
  readonly maxRuntimeMs?: number;
  readonly maxJobs?: number;
  readonly shutdownTimeoutMs?: number;
  readonly healthPort?: number;
  readonly retention?: RetentionOptions | false;
  readonly pollIntervalMs?: number;
  /** Hears the events of every worker of the run (see `RunWorkersOptions.events`). */
  readonly events?: WorkerEvents;
  /** Prometheus metrics, or `false` for none (see `RunWorkersOptions.metrics`). */
  readonly metrics?: MetricsOptions | false;
}

/**
 * `runWorkers` with everything resolved from a container: the workers of
 * `queues`, the store and logger, and — when a driver registered them — the
 * schedule store, wake-ups and leader lock, plus registered schedules. This
 * is what `stint run` calls with the container of your composition root.
 *
 * @example
 * ```ts
 * const stop = handleStopSignals(log);
 * const report = await runFromContainer(container, { queues: ["send-invoice"], mode: "once", maxRuntimeMs: 240_000, signal: stop.signal });
 * process.exitCode = report.exitCode;
 * ```
 */
export function runFromContainer(container: DependencyContainer, options: RunFromContainerOptions): Promise<RunReport> {
  if (options.queues.length === 0) throw new ConfigError("queues", "name at least one queue to run");
  const workers = options.queues.map((queue) => resolveWorker(container, queue));
  const optional = <T>(token: InjectionToken<T>): T | undefined => (container.isRegistered(token, true) ? container.resolve(token) : undefined);
  const scheduleStore = optional<ScheduleStore>(SCHEDULE_STORE);
  const definitions = resolveSchedules(container);
  const { queues: _queues, ...runOptions } = options;
  return runWorkers({
    ...runOptions,
    workers,
    store: container.resolve(JOB_STORE),
    log: container.resolve(LOGGER),
    ...(scheduleStore === undefined ? {} : { schedules: { store: scheduleStore, definitions } }),
    ...(options.mode === "loop" ? loopServices(optional) : {}),
  });
}

function loopServices(optional: <T>(token: InjectionToken<T>) => T | undefined): { wakeups?: WakeupSource; leader?: LeaderLock } {
  const wakeups = optional<WakeupSource>(WAKEUP_SOURCE);
  const leader = optional<LeaderLock>(LEADER_LOCK);
  return { ...(wakeups === undefined ? {} : { wakeups }), ...(leader === undefined ? {} : { leader }) };
}
