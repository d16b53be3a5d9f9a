import { DatabaseError, InfrastructureError, errorCodeOf } from "@stint/core";

/**
 * SQLSTATE codes (and classes) after which trying again may work: the
 * connection, the server or the transaction failed, not the statement.
 * Everything else with a SQLSTATE is a {@link DatabaseError}.
 */
const RETRYABLE_SQLSTATES: ReadonlyMap<string, string> = new Map([
  // Class 08 (connection exception) is matched as a whole below; listed for reference.
  ["08000", "connection_exception"],
  ["08003", "connection_does_not_exist"],
  ["08006", "connection_failure"],
  ["08001", "sqlclient_unable_to_establish_sqlconnection"],
  ["08004", "sqlserver_rejected_establishment_of_sqlconnection"],
  // Class 40: the transaction was rolled back; running it again is the documented remedy.
  ["40001", "serialization_failure"],
  ["40P01", "deadlock_detected"],
  ["40003", "statement_completion_unknown"],
  // Class 57: the server is going away or refused us for now.
  ["57P01", "admin_shutdown (server stopping or the backend was terminated)"],
  ["57P02", "crash_shutdown (another backend crashed)"],
  ["57P03", "cannot_connect_now (server starting up or in recovery)"],
  ["57P05", "idle_session_timeout"],
  ["57014", "query_canceled (statement_timeout or a cancel request)"],
  // Class 53: out of a resource that is likely to come back.
  ["53000", "insufficient_resources"],
  ["53100", "disk_full"],
  ["53200", "out_of_memory"],
  ["53300", "too_many_connections"],
  // Locks and sessions.
  ["55P03", "lock_not_available (lock_timeout)"],
  ["25P03", "idle_in_transaction_session_timeout"],
  // A write reached a standby, as happens for a moment during a failover.
  ["25006", "read_only_sql_transaction"],
  // Class 58: the server's own I/O failed.
  ["58000", "system_error"],
  ["58030", "io_error"],
]);

/** Node socket and DNS error codes: the network failed, not the statement. */
const RETRYABLE_SOCKET_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
]);

/** Messages pg and pg-pool use for a lost or unobtainable connection (they carry no code). */
const RETRYABLE_MESSAGES: readonly RegExp[] = [
  /connection terminated/i,
  /client has encountered a connection error/i,
  /timeout exceeded when trying to connect/i,
  /connection (?:timeout|timed out)/i,
  /query read timeout/i,
  /server closed the connection unexpectedly/i,
];

const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * Translates anything a database call threw into stint's errors. The one
 * place where pg's errors are read:
 *
 * - a lost connection, a server restart, a serialization failure, a
 *   deadlock, a statement timeout (see the table above) →
 *   `InfrastructureError` (retryable) with the `sqlState` when there is one;
 * - any other error with a SQLSTATE → `DatabaseError` (retrying will not help);
 * - an error that already carries a stint code is returned unchanged; anything else is returned as an `Error`.
 *
 * The message is prefixed with the operation that failed.
 *
 * @example
 * ```ts
 * try {
 *   await claimBatch(db, schema, params, controlledQueues);
 * } catch (thrown) {
 *   throw interpretError(thrown, "claimBatch");
 *   // InfrastructureError: "claimBatch failed: terminating connection due to administrator command" (sqlState 57P01)
 * }
 * ```
 */
export function interpretError(thrown: unknown, operation: string): Error {
  if (thrown instanceof Error && errorCodeOf(thrown) !== undefined) return thrown;
  const sqlState = findSqlState(thrown);
  const message = `${operation} failed: ${messageOf(thrown)}`;
  if (sqlState !== undefined) {
    return isRetryableSqlState(sqlState)
      ? new InfrastructureError(message, { cause: thrown, sqlState })
      : new DatabaseError(message, { cause: thrown, sqlState });
  }
  if (isConnectionFailure(thrown)) return new InfrastructureError(message, { cause: thrown });
  return thrown instanceof Error ? thrown : new Error(message, { cause: thrown });
}

/**
 * True when a SQLSTATE means "try again": class 08 or one of the codes in
 * the table of this file.
 *
 * @example
 * ```ts
 * isRetryableSqlState("40001"); // true  (serialization_failure)
 * isRetryableSqlState("23505"); // false (unique_violation)
 * ```
 */
export function isRetryableSqlState(sqlState: string): boolean {
  return sqlState.startsWith("08") || RETRYABLE_SQLSTATES.has(sqlState);
}

/** The SQLSTATE of a pg server error (or of an error it caused), if any. */
function findSqlState(thrown: unknown): string | undefined {
  for (const error of errorChain(thrown)) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && SQLSTATE.test(code) && "severity" in error) return code;
  }
  return undefined;
}

function isConnectionFailure(thrown: unknown): boolean {
  for (const error of errorChain(thrown)) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && RETRYABLE_SOCKET_CODES.has(code)) return true;
    const message = (error as { message?: unknown }).message;
    if (typeof message === "string" && RETRYABLE_MESSAGES.some((pattern) => pattern.test(message))) return true;
  }
  return false;
}

/** The error, its causes and (for an AggregateError) its members, at most 20 of them. */
function errorChain(thrown: unknown): object[] {
  const seen: object[] = [];
  const pending: unknown[] = [thrown];
  while (pending.length > 0 && seen.length < 20) {
    const current = pending.shift();
    if (typeof current !== "object" || current === null || seen.includes(current)) continue;
    seen.push(current);
    pending.push((current as { cause?: unknown }).cause);
    const members = (current as { errors?: unknown }).errors;
    if (Array.isArray(members)) pending.push(...(members as unknown[]));
  }
  return seen;
}

function messageOf(thrown: unknown): string {
  if (thrown instanceof Error && thrown.message !== "") return thrown.message;
  if (thrown instanceof AggregateError) {
    const first = (thrown.errors as unknown[]).find((error) => error instanceof Error && error.message !== "");
    if (first instanceof Error) return first.message;
  }
  const code = (thrown as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  return String(thrown);
}

/**
 * True when a database call failed on a unique constraint (SQLSTATE 23505),
 * for the few callers that turn that into a clearer refusal.
 *
 * @example
 * ```ts
 * catch (thrown) { if (isUniqueViolation(thrown)) throw new DatabaseError("that key is taken", { cause: thrown }); }
 * ```
 */
export function isUniqueViolation(thrown: unknown): boolean {
  return findSqlState(thrown) === "23505";
}
