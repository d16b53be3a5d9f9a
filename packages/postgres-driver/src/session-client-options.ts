import { ConfigError } from "@stint/core";
import { integerOption, MAX_INT4 } from "@stint/core/driver";

/** What both dedicated session connections (wake-ups, leader lock) take besides their own settings. */
export interface SessionClientOptions {
  /** Where to connect. Needs session semantics: not through a transaction-pooling PgBouncer. */
  readonly connectionString: string;
  /** The schema `migrate` created. Default `"stint"`. */
  readonly schema?: string;
  /** `application_name` shown in `pg_stat_activity`. Default `stint:<role>:<process identity>` (see `applicationName` in core). */
  readonly applicationName?: string;
  /** Called with connection failures that are handled by retrying (default: a process warning). */
  readonly onError?: (error: Error) => void;
}

/**
 * Checks the fields of {@link SessionClientOptions} and returns the
 * `application_name` to use; throws a `ConfigError` naming the field.
 *
 * @example
 * ```ts
 * const name = checkSessionClientOptions("wakeupSource", options, applicationName("listen"));
 * ```
 */
export function checkSessionClientOptions(where: string, options: SessionClientOptions, defaultName: string): string {
  if (typeof options !== "object" || options === null) throw new ConfigError(where, "options must be an object");
  if (typeof options.connectionString !== "string" || options.connectionString.trim() === "") {
    throw new ConfigError("connectionString", "must be a non-empty string such as postgres://user@host:5432/db");
  }
  if (options.onError !== undefined && typeof options.onError !== "function") throw new ConfigError("onError", "must be a function");
  const applicationName = options.applicationName ?? defaultName;
  if (typeof applicationName !== "string" || applicationName.length > 63) {
    throw new ConfigError("applicationName", "must be a string of at most 63 characters");
  }
  return applicationName;
}

/** Milliseconds option with a default, checked as an integer in range. */
export function millisecondsOption(option: string, value: number | undefined, fallback: number, min = 0): number {
  return integerOption(option, value ?? fallback, min, MAX_INT4);
}

/** The default `onError`: a process warning with a stable code, never a crash. */
export function warnAbout(code: string, what: string): (error: Error) => void {
  return (error) => process.emitWarning(`${what}: ${error.message}`, { code });
}
