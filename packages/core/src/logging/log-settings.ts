import { EnvironmentError } from "../errors/environment-error";

/** The levels a stint logger writes, most severe first. */
export const LOG_LEVELS = Object.freeze(["error", "warn", "info", "debug"] as const);

/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** How log lines look: one JSON object per line, or readable coloured text. */
export const LOG_FORMATS = Object.freeze(["json", "pretty"] as const);

/** One of {@link LOG_FORMATS}. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** What the environment asks of the logs; a field is absent when its variable is unset or empty. */
export interface LogSettings {
  /** From `STINT_LOG_LEVEL`. */
  readonly level?: LogLevel;
  /** From `STINT_LOG_FORMAT`. */
  readonly format?: LogFormat;
}

/** The environment as `process.env` has it. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Reads and checks `STINT_LOG_LEVEL` (`error`, `warn`, `info`, `debug`) and
 * `STINT_LOG_FORMAT` (`json`, `pretty`). The one place they are read:
 * `createLogger` calls it, and an entry point calls it first thing to fail
 * at start, before it connects to anything. An unset or empty variable is
 * absent from the result; any other value not listed throws an
 * {@link EnvironmentError} naming the variable.
 *
 * @example
 * ```ts
 * readLogSettings({ STINT_LOG_LEVEL: "debug" });   // { level: "debug" }
 * readLogSettings({ STINT_LOG_LEVEL: "verbose" }); // throws: STINT_LOG_LEVEL must be one of error, warn, info, debug; got "verbose"
 * ```
 */
export function readLogSettings(env: Environment = process.env): LogSettings {
  const level = readLogLevel(env);
  const format = readLogFormat(env);
  return Object.freeze({ ...(level === undefined ? {} : { level }), ...(format === undefined ? {} : { format }) });
}

/** `STINT_LOG_LEVEL`, checked; `undefined` when unset or empty. */
export function readLogLevel(env: Environment = process.env): LogLevel | undefined {
  return oneOf(env, "STINT_LOG_LEVEL", LOG_LEVELS);
}

/** `STINT_LOG_FORMAT`, checked; `undefined` when unset or empty. */
export function readLogFormat(env: Environment = process.env): LogFormat | undefined {
  return oneOf(env, "STINT_LOG_FORMAT", LOG_FORMATS);
}

function oneOf<T extends string>(env: Environment, variable: string, allowed: readonly T[]): T | undefined {
  const value = env[variable]?.trim();
  if (value === undefined || value === "") return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new EnvironmentError(variable, `must be one of ${allowed.join(", ")}`, value);
  return value as T;
}
