import { ErrorCode, errorCodeOf, ExitCode } from "@stint/core";
import { DEFAULT_SCHEMA } from "@stint/postgres-driver";
import { CliError, isCliError } from "./cli-error";

/** What a failure message may mention. */
export interface FailureScene {
  /** `host:port` of the database, when the command connects. */
  readonly address?: string;
  /** Where the URL came from, and whether it holds a password, when the command connects. */
  readonly url?: { readonly source: "--database-url" | "DATABASE_URL"; readonly hasPassword: boolean };
  readonly schema: string;
}

/** SQLSTATEs that mean the schema (or its tables) does not exist. */
const MISSING_SCHEMA_STATES = new Set(["42P01", "3F000"]);
/** invalid_password: the server refused the password given (or, with MD5, the lack of one). */
const INVALID_PASSWORD = "28P01";

/**
 * Turns anything a command threw into a {@link CliError} with the exit code
 * and a message an operator can act on: the database unreachable (69), a
 * login refused or a password missing, a missing database or an
 * unmigrated schema (78), a stint `ConfigError` or invalid name (78), a
 * payload that cannot be stored (2), a schedule name held by the other
 * origin (4).
 * Anything else is a failure (1) with its message. Each comes with the
 * stable code of its exit code (`STINT_CONFIG`, `STINT_UNREACHABLE`, …).
 */
export function explainFailure(thrown: unknown, scene: FailureScene): CliError {
  if (isCliError(thrown)) {
    // A CliError from an older copy of this module may lack its code: derive it from the exit code.
    return typeof thrown.code === "string" ? thrown : new CliError(thrown.exitCode, thrown.message, { cause: thrown, showUsage: thrown.showUsage });
  }
  const code = errorCodeOf(thrown);
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  const at = scene.address === undefined ? "PostgreSQL" : `PostgreSQL at ${scene.address}`;
  switch (code) {
    case ErrorCode.Config:
      return new CliError(ExitCode.Config, isMissingPassword(thrown) ? missingPasswordMessage(scene, at) : message, { cause: thrown });
    case ErrorCode.InvalidName:
      return new CliError(ExitCode.Config, message, { cause: thrown });
    case ErrorCode.SchemaMissing:
      return new CliError(ExitCode.Config, missingSchemaMessage(scene.schema), { cause: thrown });
    case ErrorCode.Payload:
      return new CliError(ExitCode.Usage, message, { cause: thrown });
    case ErrorCode.ScheduleConflict:
      return new CliError(ExitCode.WrongState, message, { cause: thrown });
    case ErrorCode.Infrastructure: {
      const sqlState = sqlStateOf(thrown);
      if (sqlState === undefined) {
        return new CliError(ExitCode.Infrastructure, `cannot reach ${at} (${rootMessage(thrown)}) — is the server running, and is DATABASE_URL right?`, {
          cause: thrown,
        });
      }
      return new CliError(ExitCode.Infrastructure, `${at} failed: ${rootMessage(thrown)} (SQLSTATE ${sqlState}); try again`, { cause: thrown });
    }
    case ErrorCode.Database:
      return explainDatabaseError(thrown, scene, at);
    default:
      return new CliError(ExitCode.Failure, message, { cause: thrown });
  }
}

/** The message that says the schema has to be migrated first. */
export function missingSchemaMessage(schema: string): string {
  return `schema "${schema}" has no stint tables — ${migrateHint(schema)}`;
}

/** "run `stint migrate`", with `--schema` when it is not the default. */
export function migrateHint(schema: string): string {
  return `run \`stint migrate${schema === DEFAULT_SCHEMA ? "" : ` --schema ${schema}`}\``;
}

function explainDatabaseError(thrown: unknown, scene: FailureScene, at: string): CliError {
  const sqlState = sqlStateOf(thrown) ?? "";
  const detail = rootMessage(thrown);
  if (MISSING_SCHEMA_STATES.has(sqlState)) {
    return new CliError(ExitCode.Config, missingSchemaMessage(scene.schema), { cause: thrown });
  }
  if (sqlState.startsWith("28")) {
    // A wrong password without one in the URL came from PGPASSWORD or ~/.pgpass, or was none at all (MD5 cannot tell).
    const check =
      sqlState === INVALID_PASSWORD && scene.url?.hasPassword === false
        ? `${scene.url.source} has no password: add it (postgres://user:PASSWORD@host/database), or check PGPASSWORD and ~/.pgpass`
        : "check the user and password in DATABASE_URL";
    return new CliError(ExitCode.Config, `${at} refused the login: ${detail} — ${check}`, { cause: thrown });
  }
  if (sqlState === "3D000") {
    return new CliError(ExitCode.Config, `${at}: ${detail} — check the database name in DATABASE_URL`, { cause: thrown });
  }
  if (sqlState === "42501") {
    return new CliError(ExitCode.Config, `${at}: ${detail} — the DATABASE_URL user lacks a privilege on schema "${scene.schema}"`, { cause: thrown });
  }
  return new CliError(ExitCode.Failure, `${at} refused a statement: ${detail} (SQLSTATE ${sqlState})`, { cause: thrown });
}

/** A `MissingPasswordError` of the driver (recognised by code and name, so copies of @stint/core agree). */
function isMissingPassword(thrown: unknown): boolean {
  return thrown instanceof Error && thrown.name === "MissingPasswordError";
}

function missingPasswordMessage(scene: FailureScene, at: string): string {
  const source = scene.url?.source ?? "DATABASE_URL";
  return (
    `${at} asked for a password and ${source} has none — add it to the URL (postgres://user:PASSWORD@host/database), ` +
    "or set PGPASSWORD, or put it in ~/.pgpass (or the file PGPASSFILE names)"
  );
}

function sqlStateOf(thrown: unknown): string | undefined {
  const sqlState = (thrown as { sqlState?: unknown } | null)?.sqlState;
  return typeof sqlState === "string" ? sqlState : undefined;
}

/** The innermost message: pg's own text rather than the operation prefix stint adds. */
function rootMessage(thrown: unknown): string {
  let current: unknown = thrown;
  let message = thrown instanceof Error ? thrown.message : String(thrown);
  for (let depth = 0; depth < 10 && typeof current === "object" && current !== null; depth += 1) {
    if (current instanceof AggregateError) {
      const first = (current.errors as unknown[]).find((error) => error instanceof Error && error.message !== "");
      if (first instanceof Error) message = first.message;
      break;
    }
    if (current instanceof Error && current.message !== "") message = current.message;
    current = (current as { cause?: unknown }).cause;
  }
  return message;
}
