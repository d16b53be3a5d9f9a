import { EnvironmentError } from "@stint/core";
import { PREPARED_STATEMENTS_MODES, type PreparedStatementsMode } from "./prepared-statements";

/** The variable that sets the prepared-statement mode of the pools (`auto`, `on` or `off`). */
export const PREPARED_STATEMENTS_VARIABLE = "STINT_PREPARED_STATEMENTS";

/** The variable that points the session connections (LISTEN, the leader lock) past a transaction pooler. */
export const SESSION_URL_VARIABLE = "STINT_SESSION_DATABASE_URL";

/** Where a connection setting's value came from, for `--print-config` and `stint doctor`. */
export type SettingSource = "environment" | "code" | "default";

/** One connection setting's value and where it came from. */
export interface ConnectionSetting<T> {
  readonly value: T;
  readonly source: SettingSource;
}

/** The connection settings an operator can set by environment variable, resolved. */
export interface ConnectionVariables {
  readonly preparedStatements: ConnectionSetting<PreparedStatementsMode>;
  /** `undefined` value: the session connections use the main connection string. */
  readonly sessionConnectionString: ConnectionSetting<string | undefined>;
}

/**
 * Resolves the two connection settings an operator sets without touching
 * code: the variable wins over the code's option, which wins over the
 * default (as for the worker settings). A variable that is set but empty
 * counts as unset; one with a value stint cannot use throws an
 * `EnvironmentError` naming it.
 *
 * @example
 * ```ts
 * resolveConnectionVariables({ STINT_PREPARED_STATEMENTS: "off" }, {}).preparedStatements;
 * // { value: "off", source: "environment" }
 * ```
 */
export function resolveConnectionVariables(
  env: Readonly<Record<string, string | undefined>>,
  code: { readonly preparedStatements?: PreparedStatementsMode | boolean; readonly sessionConnectionString?: string },
): ConnectionVariables {
  const mode = present(env[PREPARED_STATEMENTS_VARIABLE]);
  if (mode !== undefined && !(PREPARED_STATEMENTS_MODES as readonly string[]).includes(mode)) {
    throw new EnvironmentError(PREPARED_STATEMENTS_VARIABLE, "must be auto, on or off", mode);
  }
  const session = present(env[SESSION_URL_VARIABLE]);
  if (session !== undefined && !/^postgres(ql)?:\/\//.test(session)) {
    throw new EnvironmentError(SESSION_URL_VARIABLE, "must be a PostgreSQL URL such as postgres://user@host:5432/db", "(a value that is not one)");
  }
  return Object.freeze({
    preparedStatements:
      mode !== undefined
        ? setting(mode as PreparedStatementsMode, "environment")
        : code.preparedStatements !== undefined
          ? setting(modeOf(code.preparedStatements), "code")
          : setting<PreparedStatementsMode>("auto", "default"),
    sessionConnectionString:
      session !== undefined
        ? setting<string | undefined>(session, "environment")
        : code.sessionConnectionString !== undefined
          ? setting<string | undefined>(code.sessionConnectionString, "code")
          : setting<string | undefined>(undefined, "default"),
  });
}

function modeOf(value: PreparedStatementsMode | boolean): PreparedStatementsMode {
  return value === true ? "on" : value === false ? "off" : value;
}

function setting<T>(value: T, source: SettingSource): ConnectionSetting<T> {
  return Object.freeze({ value, source });
}

function present(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}
