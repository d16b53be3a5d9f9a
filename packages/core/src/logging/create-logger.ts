import winston from "winston";
import { ConfigError } from "../errors/config-errors";
import type { Logger } from "./logger";

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Lowest level written: `error`, `warn`, `info` or `debug`. Default `STINT_LOG_LEVEL` or `info`. */
  readonly level?: string;
  /**
   * `json` (one object per line), `pretty` (readable, coloured) or `auto`:
   * pretty when standard output is a terminal, JSON otherwise. Default `auto`.
   */
  readonly format?: "json" | "pretty" | "auto";
  /** Write nothing (tests). Default false. */
  readonly silent?: boolean;
}

const LEVELS = ["error", "warn", "info", "debug"];

/**
 * A winston logger writing structured lines to standard output: JSON when
 * not a TTY (for log shippers), readable when it is.
 *
 * @example
 * ```ts
 * const log = createLogger({ level: "debug" });
 * log.child({ queue: "send-invoice" }).info("Started worker");
 * ```
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.STINT_LOG_LEVEL ?? "info";
  if (!LEVELS.includes(level)) {
    throw new ConfigError("level", `must be one of ${LEVELS.join(", ")}, got ${JSON.stringify(level)}`);
  }
  const format = options.format ?? "auto";
  const pretty = format === "pretty" || (format === "auto" && process.stdout.isTTY === true);
  return winston.createLogger({
    level,
    silent: options.silent ?? false,
    format: pretty ? prettyFormat() : winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Console()],
  });
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
  return createLogger({ silent: true });
}
