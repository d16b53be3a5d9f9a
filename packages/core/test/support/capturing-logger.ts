import type { LogFields, Logger } from "../../src/logging/logger";

/** One line a {@link capturingLogger} was given. */
export interface CapturedLine {
  readonly level: string;
  readonly message: string;
  readonly fields: LogFields;
}

/**
 * A logger that keeps what it is given, children included.
 *
 * @example
 * ```ts
 * const lines: CapturedLine[] = [];
 * new ScheduleDeclarer(store, definitions, { log: capturingLogger(lines) });
 * ```
 */
export function capturingLogger(lines: CapturedLine[], base: LogFields = {}): Logger {
  const write = (level: string) => (message: string, fields?: LogFields) => lines.push({ level, message, fields: { ...base, ...fields } });
  return {
    error: write("error"),
    warn: write("warn"),
    info: write("info"),
    debug: write("debug"),
    child: (fields) => capturingLogger(lines, { ...base, ...fields }),
  };
}
