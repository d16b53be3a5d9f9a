// The example application in the shape `stint run --app @stint/examples/app` loads.
import type { LogLevel } from "@stint/core";
import { createDatabase } from "@stint/postgres-driver";
import { migrateAppSchema } from "./app/app-schema";
import { createCompositionRoot, type CompositionRoot } from "./composition-root";

/** Where the CLI says the database is, and the log level `--log-level` or `STINT_LOG_LEVEL` asks for. */
export interface AppEnvironment {
  readonly connectionString: string;
  readonly schema: string;
  readonly logLevel?: LogLevel;
}

/**
 * Builds the example application for the CLI: the composition root over
 * the given database and schema, with worker logs at the level the CLI
 * passes (`--log-level`, else `STINT_LOG_LEVEL`), else `info`.
 *
 * @example
 * ```sh
 * stint run send-invoice-email --once --max-runtime 4m --app @stint/examples/app
 * ```
 */
export function createApp(env: AppEnvironment): CompositionRoot {
  const logger = env.logLevel === undefined ? {} : { level: env.logLevel };
  return createCompositionRoot({ connectionString: env.connectionString, schema: env.schema, logger });
}

/**
 * Creates or updates the application's own tables (invoices, reports, …);
 * `stint migrate --app @stint/examples/app` runs it after stint's migrations.
 *
 * @example
 * ```sh
 * stint migrate --app @stint/examples/app
 * ```
 */
export async function migrate(env: AppEnvironment): Promise<void> {
  const database = createDatabase({ connectionString: env.connectionString, applicationName: "stint-examples:migrate" });
  try {
    await migrateAppSchema(database.db, { schema: env.schema });
  } finally {
    await database.close();
  }
}
