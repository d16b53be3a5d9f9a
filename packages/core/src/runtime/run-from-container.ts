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
import type { Environment } from "../logging/log-settings";
import { settingOverrides, type SettingFlags } from "../settings/resolve-run-settings";
import { settingsOfWorkers } from "./container-settings";
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
  /**
   * Where the `STINT_*` settings variables are read from (`STINT_CONCURRENCY`,
   * `STINT_LEASE_SEND_INVOICE_EMAIL`, … see docs/operating.md, "Settings from the
   * environment"). Default `process.env`; `false` reads none, so only the
   * code's values apply.
   */
  readonly env?: Environment | false;
  /** Values that beat the environment for every queue, as typed on a command line (what `stint run --concurrency 8` passes). */
  readonly flags?: SettingFlags;
  /**
   * How long a schedule the code stopped declaring keeps firing, in ms: a
   * minute to a year, default a day. `STINT_SCHEDULE_GRACE` and `stint run
   * --schedule-grace` beat it (see `RunWorkersOptions.schedules`).
   */
  readonly scheduleGraceMs?: number;
}

/**
 * `runWorkers` with everything resolved from a container: the workers of
 * `queues`, the store and logger, and — when a driver registered them — the
 * schedule store, wake-ups and leader lock, plus registered schedules. This
 * is what `stint run` calls with the container of your composition root.
 *
 * It reads the settings variables from `process.env` (or `env`): each
 * worker runs with flag > `STINT_<SETTING>_<QUEUE>` > `STINT_<SETTING>` >
 * its constructor's options (and this call's `pollIntervalMs`,
 * `shutdownTimeoutMs`) > the defaults; the schedule grace is
 * `--schedule-grace` > `STINT_SCHEDULE_GRACE` > `scheduleGraceMs` > a day.
 * An invalid value throws an `EnvironmentError` naming the variable before
 * anything starts; a variable that looks like a misspelt setting is logged
 * as a warning.
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
  const log = container.resolve(LOGGER);
  const settings = settingsOfWorkers(workers, log, options);
  for (const warning of settings.warnings) log.warn(`Settings: ${warning}`);
  const overrides = Object.fromEntries(settings.queues.map((queue) => [queue.queue, settingOverrides(queue)]));
  const { queues: _queues, env: _env, flags: _flags, scheduleGraceMs: _graceMs, ...runOptions } = options;
  const graceMs = settings.scheduleGraceMs.value;
  return runWorkers({
    ...runOptions,
    overrides,
    workers,
    store: container.resolve(JOB_STORE),
    log,
    ...(scheduleStore === undefined ? {} : { schedules: { store: scheduleStore, definitions, graceMs } }),
    ...(options.mode === "loop" ? loopServices(optional) : {}),
  });
}

function loopServices(optional: <T>(token: InjectionToken<T>) => T | undefined): { wakeups?: WakeupSource; leader?: LeaderLock } {
  const wakeups = optional<WakeupSource>(WAKEUP_SOURCE);
  const leader = optional<LeaderLock>(LEADER_LOCK);
  return { ...(wakeups === undefined ? {} : { wakeups }), ...(leader === undefined ? {} : { leader }) };
}
