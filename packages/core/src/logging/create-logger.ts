import winston from "winston";
import { ConfigError } from "../errors/config-errors";
import type { Logger } from "./logger";
import { LOG_FORMATS, LOG_LEVELS, readLogFormat, readLogLevel, type Environment, type LogFormat, type LogLevel } from "./log-settings";

/** Where log lines are written: a writable stream, e.g. `process.stderr`. */
export type LogStream = NodeJS.WritableStream & { readonly isTTY?: boolean };

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Lowest level written, whatever the environment says. Default: `STINT_LOG_LEVEL`, else `defaultLevel`. */
  readonly level?: LogLevel;
  /** The level when neither `level` nor `STINT_LOG_LEVEL` is given. Default `info`. */
  readonly defaultLevel?: LogLevel;
  /**
   * `json` (one object per line), `pretty` (readable, coloured) or `auto`:
   * pretty when the log stream is a terminal, JSON otherwise. Default:
   * `STINT_LOG_FORMAT`, else `auto`.
   */
  readonly format?: LogFormat | "auto";
  /** Write nothing (tests). Default false. */
  readonly silent?: boolean;
  /** Where the lines go. Default standard error, so that standard output stays for a command's data. */
  readonly stream?: LogStream;
  /** Where `STINT_LOG_LEVEL` and `STINT_LOG_FORMAT` are read from. Default `process.env`. */
  readonly env?: Environment;
}

/**
 * A winston logger writing structured lines to standard error: JSON when
 * it is not a terminal (for log shippers), readable when it is. The level
 * and format come from the options, else from `STINT_LOG_LEVEL` and
 * `STINT_LOG_FORMAT` (see `readLogSettings`); an invalid value throws.
 *
 * @example
 * ```ts
 * const log = createLogger({ defaultLevel: "warn" }); // STINT_LOG_LEVEL=debug still wins
 * log.child({ queue: "send-invoice" }).info("Started worker");
 * ```
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const env = options.env ?? process.env;
  const level = checked("level", options.level, LOG_LEVELS) ?? readLogLevel(env) ?? checked("defaultLevel", options.defaultLevel, LOG_LEVELS) ?? "info";
  const format = checked("format", options.format, [...LOG_FORMATS, "auto"]) ?? readLogFormat(env) ?? "auto";
  const stream = options.stream ?? process.stderr;
  const pretty = format === "pretty" || (format === "auto" && stream.isTTY === true);
  return winston.createLogger({
    level,
    silent: options.silent ?? false,
    format: pretty ? prettyFormat() : winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Stream({ stream, eol: "\n" })],
  });
}

function checked<T extends string>(option: string, value: T | undefined, allowed: readonly string[]): T | undefined {
  if (value !== undefined && !allowed.includes(value)) {
    throw new ConfigError(option, `must be one of ${allowed.join(", ")}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function prettyFormat(): winston.Logform.Format {
  return winston.format.combine(
    winston.format.timestamp({ format: "HH:mm:ss.SSS" }),
    winston.format.colorize(),
    winston.format.printf((info) => {
      const { timestamp, level, message, ...fields } = info;
      const extra = Object.entries(fields)
        .filter(([key]) => typeof key === "string")
        .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
        .join(" ");
      return `${String(timestamp)} ${level} ${String(message)}${extra ? `  ${extra}` : ""}`;
    }),
  );
}

/** A logger that writes nothing; handy in tests. */
export function createSilentLogger(): Logger {
  return createLogger({ silent: true, level: "error", format: "json" });
}
