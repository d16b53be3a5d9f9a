import type { DependencyContainer } from "tsyringe";
import { resolveWorker, type AnyQueueWorker } from "../di/register-core";
import { LOGGER } from "../di/tokens";
import { ConfigError } from "../errors/config-errors";
import type { Logger } from "../logging/logger";
import { LOG_LEVELS, type Environment, type LogLevel } from "../logging/log-settings";
import { checkScheduleGrace } from "../schedule/schedule-grace";
import { describeSource, resolveRunSettings, type RunSettings, type SettingFlags } from "../settings/resolve-run-settings";

/** What decides a run's settings besides the workers: the options of `runFromContainer` that bear on them. */
export interface SettingsOptions {
  readonly queues: readonly string[];
  /** Where `STINT_*` settings are read from. Default `process.env`; `false` reads none. */
  readonly env?: Environment | false;
  readonly flags?: SettingFlags;
  readonly pollIntervalMs?: number;
  readonly shutdownTimeoutMs?: number;
  /** How long a schedule the code stopped declaring keeps firing, in ms (under `STINT_SCHEDULE_GRACE` and `--schedule-grace`). */
  readonly scheduleGraceMs?: number;
}

/**
 * The settings a `runFromContainer` call with these options would run
 * with: per queue, each value and where it came from (see
 * `resolveRunSettings`). Constructs the workers, starts nothing; this is
 * what `stint run --print-config` prints.
 *
 * @example
 * ```ts
 * const settings = resolveContainerSettings(container, { queues: ["send-invoice-email"], flags: { concurrency: "2" } });
 * settings.queues[0].settings.concurrency.value; // 2
 * ```
 */
export function resolveContainerSettings(container: DependencyContainer, options: SettingsOptions): RunSettings {
  if (options.queues.length === 0) throw new ConfigError("queues", "name at least one queue to run");
  const workers = options.queues.map((queue) => resolveWorker(container, queue));
  return settingsOfWorkers(workers, container.resolve(LOGGER), options);
}

/** {@link resolveContainerSettings} for workers already resolved, with warnings for a log level the logger does not follow. */
export function settingsOfWorkers(workers: readonly AnyQueueWorker[], log: Logger, options: SettingsOptions): RunSettings {
  const codeLogLevel = levelOf(log);
  const resolved = resolveRunSettings({
    queues: workers.map((worker) => {
      const given = worker.givenOptions;
      const code = {
        concurrency: given.concurrency,
        prefetch: given.prefetch,
        leaseMs: given.leaseMs,
        shutdownTimeoutMs: options.shutdownTimeoutMs ?? given.shutdownTimeoutMs,
        pollIntervalMs: options.pollIntervalMs,
      };
      return { queue: worker.queue, code: Object.fromEntries(Object.entries(code).filter(([, value]) => value !== undefined)) };
    }),
    ...(options.flags === undefined ? {} : { flags: options.flags }),
    env: options.env === false ? {} : (options.env ?? process.env),
    ...(codeLogLevel === undefined ? {} : { codeLogLevel }),
    ...(options.scheduleGraceMs === undefined ? {} : { codeScheduleGraceMs: checkScheduleGrace("scheduleGraceMs", options.scheduleGraceMs) }),
  });
  // The job kind's dead-letter queue, shown beside the tunables: it is code, not a setting a flag changes.
  const settings: RunSettings = Object.freeze({
    ...resolved,
    queues: Object.freeze(resolved.queues.map((entry, index) => Object.freeze({ ...entry, deadLetterQueue: workers[index]!.job.deadLetterQueue ?? null }))),
  });
  const asked = settings.logLevel;
  if (codeLogLevel === undefined || codeLogLevel === asked.value || asked.source.kind === "code" || asked.source.kind === "default") return settings;
  const warning = `the logger writes at ${codeLogLevel}, not at ${asked.value} as ${describeSource(asked.source)} asks: build it with registerLogger or createLogger, passing the app environment's logLevel`;
  return Object.freeze({
    ...settings,
    logLevel: { value: codeLogLevel, source: { kind: "code" as const } },
    warnings: Object.freeze([...settings.warnings, warning]),
  });
}

/** The most verbose level the logger writes, when it can say (`isLevelEnabled`, as winston has). */
function levelOf(log: Logger): LogLevel | undefined {
  if (typeof log.isLevelEnabled !== "function") return undefined;
  return [...LOG_LEVELS].reverse().find((level) => log.isLevelEnabled!(level));
}
