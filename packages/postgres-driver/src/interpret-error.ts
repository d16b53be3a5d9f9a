import { ConfigError, DatabaseError, InfrastructureError, MissingPasswordError, SchemaMissingError, errorCodeOf } from "@stint/core";
import { isPreparedStatementClash } from "./connection/prepared-statements";
import { DEFAULT_SCHEMA } from "./schema/default-schema";

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

/** What a prepared-statement clash means, for an operator who pinned `STINT_PREPARED_STATEMENTS=on`. */
const POOLER_HINT =
  " — named prepared statements met a server connection that does not hold them, as happens behind a transaction pooler " +
  "(PgBouncer in pool_mode=transaction): set STINT_PREPARED_STATEMENTS=auto (the default) or off";

/** SQLSTATEs of a missing schema (3F000), table (42P01) or function (42883): stint's, when the message names its schema. */
const MISSING_OBJECT_SQLSTATES: ReadonlySet<string> = new Set(["3F000", "42P01", "42883"]);

/**
 * What pg says when the server asks for a password (SCRAM) and it has none
 * (no password in the connection string, no PGPASSWORD, no password-file
 * line), or a `password` function answered something else than a string.
 */
const MISSING_PASSWORD_MESSAGES: readonly RegExp[] = [/client password must be a (?:non-empty )?string/i, /^password must be a string$/i];

/** What {@link interpretError} may know of the call that failed. */
export interface ErrorScope {
  /** The schema the call used: a missing table or function of it is a {@link SchemaMissingError}. */
  readonly schema?: string;
}

/**
 * Translates anything a database call threw into stint's errors. The one
 * place where pg's errors are read:
 *
 * - a lost connection, a server restart, a serialization failure, a
 *   deadlock, a statement timeout (see the table above) →
 *   `InfrastructureError` (retryable) with the `sqlState` when there is one;
 * - any other error with a SQLSTATE → `DatabaseError` (retrying will not help);
 * - a missing schema, table or function (SQLSTATE 3F000, 42P01, 42883)
 *   named in `scope.schema` → `SchemaMissingError` (`STINT_SCHEMA_MISSING`),
 *   whose message says to run `stint migrate`;
 * - a password the server asked for and the connection settings lack →
 *   `MissingPasswordError` (`STINT_CONFIG`; with MD5 authentication the
 *   server cannot tell a missing password from a wrong one, and answers
 *   28P01, a `DatabaseError`);
 * - a job's key refused because it is a group and a serial key at once in
 *   its queue (SQLSTATE 22023 from the trigger `enter_job_group`) →
 *   `ConfigError` naming the option (`serialKey` or `group`) and the key,
 *   as the in-memory store throws it;
 * - a named prepared statement refused with SQLSTATE 42P05 or 26000 (what
 *   a transaction pooler does to them, when `preparedStatements` is `"on"`)
 *   → `DatabaseError` whose message names the pooler and the setting;
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
export function interpretError(thrown: unknown, operation: string, scope: ErrorScope = {}): Error {
  if (thrown instanceof Error && errorCodeOf(thrown) !== undefined) return thrown;
  const sqlState = findSqlState(thrown);
  const message = `${operation} failed: ${messageOf(thrown)}${sqlState !== undefined && isPreparedStatementClash({ code: sqlState }) ? POOLER_HINT : ""}`;
  const setupProblem = missingSchema(thrown, sqlState, message, scope.schema) ?? missingPassword(thrown, operation);
  if (setupProblem !== undefined) return setupProblem;
  const refusedKey = groupKeyConflict(thrown, sqlState);
  if (refusedKey !== undefined) return refusedKey;
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

/** A missing schema, table or function whose name is qualified with `schema`: stint's own, so its migrations have not run. */
function missingSchema(thrown: unknown, sqlState: string | undefined, message: string, schema: string | undefined): SchemaMissingError | undefined {
  if (sqlState === undefined || schema === undefined || !MISSING_OBJECT_SQLSTATES.has(sqlState)) return undefined;
  // The name is in the message in any language the server speaks; the check keeps another schema's table (a user's trigger) a DatabaseError.
  if (!namesWord(messageOf(thrown), schema)) return undefined;
  const command = schema === DEFAULT_SCHEMA ? "stint migrate" : `stint migrate --schema ${schema}`;
  return new SchemaMissingError(`${message} — schema "${schema}" is not migrated: run \`${command}\``, { schema, sqlState, cause: thrown });
}

/** What `enter_job_group` raises (SQLSTATE 22023) for a key used as a group and as a serial key in one queue; its own text, never translated. */
const GROUP_KEY_CONFLICT =
  /^key (?:E?'(?:[^']|'')*') of queue (?:E?'(?:[^']|'')*') is (?:a group|a serial key); a job cannot use it as (a serial key|a group)$/;

/** A job's key refused as a group and a serial key at once: the caller's options are wrong, not the database. */
function groupKeyConflict(thrown: unknown, sqlState: string | undefined): ConfigError | undefined {
  if (sqlState !== "22023") return undefined;
  for (const error of errorChain(thrown)) {
    const said = (error as { message?: unknown }).message;
    const match = typeof said === "string" ? GROUP_KEY_CONFLICT.exec(said) : null;
    if (match !== null) return new ConfigError(match[1] === "a serial key" ? "serialKey" : "group", said as string, { cause: thrown });
  }
  return undefined;
}

/** True when `word` occurs in `text` with no identifier character right before or after it. */
function namesWord(text: string, word: string): boolean {
  const identifierCharacter = /[\p{L}\p{N}_$]/u;
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + 1)) {
    const before = text[at - 1] ?? " ";
    const after = text[at + word.length] ?? " ";
    if (!identifierCharacter.test(before) && !identifierCharacter.test(after)) return true;
  }
  return false;
}

function missingPassword(thrown: unknown, operation: string): MissingPasswordError | undefined {
  const said = errorChain(thrown).some((error) => {
    const message = (error as { message?: unknown }).message;
    return typeof message === "string" && MISSING_PASSWORD_MESSAGES.some((pattern) => pattern.test(message));
  });
  if (!said) return undefined;
  return new MissingPasswordError(
    `${operation} failed: PostgreSQL asked for a password and the connection settings give none — put it in the connection string ` +
      "(postgres://user:password@host:5432/database), set PGPASSWORD, or add a line for it to the password file (~/.pgpass, or the file PGPASSFILE names)",
    { cause: thrown },
  );
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
