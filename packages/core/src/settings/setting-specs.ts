import { DEFAULT_SCHEDULE_GRACE_MS, MAX_SCHEDULE_GRACE_MS, MIN_SCHEDULE_GRACE_MS } from "../limits";
import { LOG_LEVELS, type LogLevel } from "../logging/log-settings";
import { formatDuration, parseDuration } from "../time/duration-text";
import { POLL_INTERVAL_LIMITS } from "../worker/run-options";
import { WORKER_OPTION_LIMITS } from "../worker/worker-options";

/**
 * The worker settings an operator tunes per deployment, by the names of the
 * options they set (`WorkerOptions` and `RunOptions`).
 */
export interface TunableSettings {
  readonly concurrency: number;
  readonly prefetch: number | "auto";
  readonly leaseMs: number;
  readonly pollIntervalMs: number;
  readonly shutdownTimeoutMs: number;
}

/** One of the per-queue settings. */
export type TunableSetting = keyof TunableSettings;

/** How one setting is spelt, read, checked and shown. */
export interface SettingSpec<V> {
  /** The variable's name: `STINT_CONCURRENCY`, and `STINT_CONCURRENCY_<QUEUE>` for one queue. */
  readonly variable: string;
  /** The `stint run` flag: `--concurrency`. */
  readonly flag: string;
  /** The built-in default. */
  readonly fallback: V;
  /** What a value must be, completing "`STINT_X` …" (the same ranges as the code options). */
  readonly expected: string;
  /** The value of a trimmed, non-empty text, or `undefined` when it is not acceptable. */
  parse(text: string): V | undefined;
  /** The value as the flag and the variable spell it. */
  format(value: V): string;
}

function integerSpec(variable: string, flag: string, limits: { readonly min: number; readonly max: number }, fallback: number): SettingSpec<number> {
  return {
    variable,
    flag,
    fallback,
    expected: `must be an integer from ${limits.min} to ${limits.max}`,
    parse: (text) => integerIn(text, limits),
    format: String,
  };
}

function durationSpec(
  variable: string,
  flag: string,
  limits: { readonly min: number; readonly max: number; readonly default: number },
  examples = "500ms, 90s or 2m",
): SettingSpec<number> {
  return {
    variable,
    flag,
    fallback: limits.default,
    expected: `must be a duration from ${formatDuration(limits.min)} to ${formatDuration(limits.max)}, such as ${examples}`,
    parse: (text) => {
      const ms = parseDuration(text);
      return ms !== undefined && ms >= limits.min && ms <= limits.max ? ms : undefined;
    },
    format: formatDuration,
  };
}

function integerIn(text: string, limits: { readonly min: number; readonly max: number }): number | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= limits.min && value <= limits.max ? value : undefined;
}

const { concurrency, prefetch, leaseMs, shutdownTimeoutMs } = WORKER_OPTION_LIMITS;

/** The per-queue settings, in the order they are shown. */
export const TUNABLE_SETTINGS: { readonly [K in TunableSetting]: SettingSpec<TunableSettings[K]> } = Object.freeze({
  concurrency: integerSpec("STINT_CONCURRENCY", "--concurrency", concurrency, concurrency.default),
  prefetch: {
    variable: "STINT_PREFETCH",
    flag: "--prefetch",
    fallback: "auto",
    expected: `must be auto or an integer from ${prefetch.min} to ${prefetch.max}`,
    parse: (text: string) => (text === "auto" ? "auto" : integerIn(text, prefetch)),
    format: String,
  } satisfies SettingSpec<number | "auto">,
  leaseMs: durationSpec("STINT_LEASE", "--lease", leaseMs),
  pollIntervalMs: durationSpec("STINT_POLL_INTERVAL", "--poll-interval", POLL_INTERVAL_LIMITS),
  shutdownTimeoutMs: durationSpec("STINT_SHUTDOWN_TIMEOUT", "--shutdown-timeout", shutdownTimeoutMs),
});

/** The process-wide log level: one logger per process, so no per-queue variable. */
export const LOG_LEVEL_SETTING: SettingSpec<LogLevel> = Object.freeze({
  variable: "STINT_LOG_LEVEL",
  flag: "--log-level",
  fallback: "info",
  expected: `must be one of ${LOG_LEVELS.join(", ")}`,
  parse: (text: string) => ((LOG_LEVELS as readonly string[]).includes(text) ? (text as LogLevel) : undefined),
  format: String,
});

/**
 * How long a schedule the code stopped declaring keeps firing: one per
 * process, read by the run's schedule ticker (and by `stint schedules
 * list` to show which schedules expired).
 */
export const SCHEDULE_GRACE_SETTING: SettingSpec<number> = Object.freeze(
  durationSpec(
    "STINT_SCHEDULE_GRACE",
    "--schedule-grace",
    { min: MIN_SCHEDULE_GRACE_MS, max: MAX_SCHEDULE_GRACE_MS, default: DEFAULT_SCHEDULE_GRACE_MS },
    "12h, 1d or 7d",
  ),
);
