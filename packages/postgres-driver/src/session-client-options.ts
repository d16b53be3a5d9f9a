import { ConfigError } from "@stint/core";
import { integerOption, MAX_INT4, rejectUnknownOptions } from "@stint/core/driver";
import { emitProcessWarning, type WarningListener } from "./connection/driver-warning";
import { SessionCheck } from "./connection/session-check";

/** What both dedicated session connections (wake-ups, leader lock) take besides their own settings. */
export interface SessionClientOptions {
  /**
   * Where to connect. LISTEN and the advisory lock need a session: behind a
   * transaction pooler they are replaced by polling and a lease row.
   */
  readonly connectionString: string;
  /** The schema `migrate` created. Default `"stint"`. */
  readonly schema?: string;
  /** `application_name` shown in `pg_stat_activity`. Default `stint:<role>:<process identity>` (see `applicationName` in core). */
  readonly applicationName?: string;
  /** Called with connection failures that are handled by retrying (default: a process warning). */
  readonly onError?: (error: Error) => void;
  /**
   * Whether `connectionString` keeps sessions, found out once (see
   * `SessionCheck`); share one among the wake-ups, the completion hints
   * and the leader lock of one database. Default: a check of its own.
   */
  readonly sessionCheck?: SessionCheck;
  /** Told once when the check finds a transaction pooler; default: a process warning. Ignored when `sessionCheck` is given. */
  readonly onWarning?: WarningListener;
}

/** What {@link checkSessionClientOptions} found: the name to connect under and the session check to use. */
export interface CheckedSessionClient {
  readonly applicationName: string;
  readonly sessionCheck: SessionCheck;
}

/** The option names every session client takes. */
const SESSION_CLIENT_OPTION_KEYS: readonly string[] = Object.freeze(["connectionString", "schema", "applicationName", "onError", "sessionCheck", "onWarning"]);

/**
 * Checks the fields of {@link SessionClientOptions} (and refuses any name
 * outside them and `ownKeys`), and returns the `application_name` to use
 * and the session check: the one given, or one of its own. Throws a
 * `ConfigError` naming the field.
 *
 * @example
 * ```ts
 * const { applicationName, sessionCheck } = checkSessionClientOptions("wakeupSource", options, applicationName("listen"), ["healthCheckIntervalMs"]);
 * ```
 */
export function checkSessionClientOptions(where: string, options: SessionClientOptions, defaultName: string, ownKeys: readonly string[]): CheckedSessionClient {
  if (typeof options !== "object" || options === null) throw new ConfigError(where, "options must be an object");
  rejectUnknownOptions(where, options, [...SESSION_CLIENT_OPTION_KEYS, ...ownKeys]);
  if (typeof options.connectionString !== "string" || options.connectionString.trim() === "") {
    throw new ConfigError("connectionString", "must be a non-empty string such as postgres://user@host:5432/db");
  }
  if (options.onError !== undefined && typeof options.onError !== "function") throw new ConfigError("onError", "must be a function");
  const applicationName = options.applicationName ?? defaultName;
  if (typeof applicationName !== "string" || applicationName.length > 63) {
    throw new ConfigError("applicationName", "must be a string of at most 63 characters");
  }
  return { applicationName, sessionCheck: sessionCheckOf(options, applicationName) };
}

function sessionCheckOf(options: SessionClientOptions, applicationName: string): SessionCheck {
  if (options.sessionCheck !== undefined) {
    // Checked by shape, so a check from another copy of this package is accepted too.
    if (typeof (options.sessionCheck as { kind?: unknown } | null)?.kind !== "function") throw new ConfigError("sessionCheck", "must be a SessionCheck");
    return options.sessionCheck;
  }
  if (options.onWarning !== undefined && typeof options.onWarning !== "function") throw new ConfigError("onWarning", "must be a function");
  return new SessionCheck({ connectionString: options.connectionString, applicationName, onWarning: options.onWarning ?? emitProcessWarning });
}

/** Milliseconds option with a default, checked as an integer in range. */
export function millisecondsOption(option: string, value: number | undefined, fallback: number, min = 0): number {
  return integerOption(option, value ?? fallback, min, MAX_INT4);
}

/** The default `onError`: a process warning with a stable code, never a crash. */
export function warnAbout(code: string, what: string): (error: Error) => void {
  return (error) => process.emitWarning(`${what}: ${error.message}`, { code });
}
