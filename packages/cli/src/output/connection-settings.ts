import {
  POSTGRES_CONNECTION_SETTINGS,
  PREPARED_STATEMENTS_VARIABLE,
  resolveConnectionVariables,
  SESSION_URL_VARIABLE,
  type ConnectionSetting,
  type ConnectionVariables,
} from "@stint/postgres-driver";
import type { DependencyContainer } from "tsyringe";
import { redactUrl } from "../connection/database-url";

/** One connection setting as `--print-config` shows it. */
export interface ConnectionSettingRow {
  /** The flag-style name: `prepared-statements`, `session-database-url`. */
  readonly setting: string;
  /** The value (a URL without its password); `null` for the session URL when the pools' URL is used. */
  readonly value: string | null;
  /** `env STINT_…`, `code` (the app's registerPostgresDriver options) or `default`. */
  readonly source: string;
}

/**
 * The connection settings a run of the app would use: the app's own
 * options as its `registerPostgresDriver` resolved them (when it
 * registered the driver), under the variables of `env`, which win.
 *
 * @example
 * ```ts
 * connectionSettingRows(app.container, process.env);
 * // [{ setting: "prepared-statements", value: "auto", source: "default" }, { setting: "session-database-url", value: null, source: "default" }]
 * ```
 */
export function connectionSettingRows(container: DependencyContainer, env: Readonly<Record<string, string | undefined>>): readonly ConnectionSettingRow[] {
  const registered = container.isRegistered(POSTGRES_CONNECTION_SETTINGS, true) ? container.resolve(POSTGRES_CONNECTION_SETTINGS) : undefined;
  const fromCode = registered === undefined ? {} : codeValues(registered);
  const { preparedStatements, sessionConnectionString } = resolveConnectionVariables(env, fromCode);
  return [
    row("prepared-statements", preparedStatements.value, preparedStatements, PREPARED_STATEMENTS_VARIABLE),
    row(
      "session-database-url",
      sessionConnectionString.value === undefined ? null : redactUrl(sessionConnectionString.value),
      sessionConnectionString,
      SESSION_URL_VARIABLE,
    ),
  ];
}

/** What the app's code set (as opposed to its environment or the defaults). */
function codeValues(settings: ConnectionVariables): Parameters<typeof resolveConnectionVariables>[1] {
  const { preparedStatements, sessionConnectionString } = settings;
  return {
    ...(preparedStatements.source === "code" ? { preparedStatements: preparedStatements.value } : {}),
    ...(sessionConnectionString.source === "code" && sessionConnectionString.value !== undefined
      ? { sessionConnectionString: sessionConnectionString.value }
      : {}),
  };
}

function row(setting: string, value: string | null, resolved: ConnectionSetting<unknown>, variable: string): ConnectionSettingRow {
  return Object.freeze({ setting, value, source: resolved.source === "environment" ? `env ${variable}` : resolved.source });
}
