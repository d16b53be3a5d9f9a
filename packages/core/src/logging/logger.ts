/** Structured fields attached to a log line (`jobId`, `queue`, `attempt`, …). */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * The part of a logger stint uses. A winston logger satisfies it as is;
 * so does any logger with these four methods and `child`.
 *
 * @example
 * ```ts
 * log.info("Completed job 812 (send-invoice, 41 ms, attempt 2/10)", { jobId: "812" });
 * ```
 */
export interface Logger {
  error(message: string, fields?: LogFields): unknown;
  warn(message: string, fields?: LogFields): unknown;
  info(message: string, fields?: LogFields): unknown;
  debug(message: string, fields?: LogFields): unknown;
  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger;
  /**
   * Whether lines of `level` are written at all (winston has it). When a
   * logger has it, stint skips building per-job lines that would be
   * dropped; without it, every line is built and handed over.
   */
  isLevelEnabled?(level: "error" | "warn" | "info" | "debug"): boolean;
}
