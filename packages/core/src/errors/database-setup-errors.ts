import { ErrorCode } from "./error-codes";
import { StintError } from "./stint-error";

/**
 * stint's schema, or one of its tables or functions, does not exist in the
 * database: `stint migrate` (or `migrate(db)`) has not run for it, or not
 * all of this version's migrations have. Retrying will not help until the
 * migrations run; a worker that meets it stops, and its run exits with 78
 * (configuration). The message names what is missing and the command that
 * creates it. Store implementations throw it; applications recognise it by
 * its code, `STINT_SCHEMA_MISSING`.
 *
 * @example
 * ```ts
 * // SchemaMissingError: enqueue failed: relation "billing.jobs" does not exist — schema "billing" is not migrated: run `stint migrate --schema billing`
 * err.schema;   // "billing"
 * err.sqlState; // "42P01"
 * ```
 */
export class SchemaMissingError extends StintError {
  /** The schema whose stint tables are missing. */
  readonly schema: string;
  /** The SQLSTATE the database answered with, when it said one. */
  readonly sqlState: string | undefined;

  constructor(message: string, options: { readonly schema: string; readonly sqlState?: string; readonly cause?: unknown }) {
    super(ErrorCode.SchemaMissing, message, { cause: options.cause });
    this.schema = options.schema;
    this.sqlState = options.sqlState;
  }
}

/**
 * The database asked for a password and the connection settings give none
 * (no password in the connection string, no `PGPASSWORD`, no line in the
 * password file). A configuration error (`STINT_CONFIG`): nothing is
 * retried, and a run stops with 78.
 *
 * @example
 * ```ts
 * // MissingPasswordError: connect failed: PostgreSQL asked for a password and the connection settings give none — …
 * hasErrorCode(err, ErrorCode.Config); // true
 * ```
 */
export class MissingPasswordError extends StintError {
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(ErrorCode.Config, message, options);
  }
}
