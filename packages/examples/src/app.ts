// The example application in the shape `stint run --app @stint/examples/app` loads.
import { createDatabase } from "@stint/postgres-driver";
import { migrateAppSchema } from "./app/app-schema";
import { createCompositionRoot, type CompositionRoot } from "./composition-root";

/** Where the CLI says the database is. */
export interface AppEnvironment {
  readonly connectionString: string;
  readonly schema: string;
}

/**
 * Builds the example application for the CLI: the composition root over
 * the given database and schema, with worker logs at `STINT_LOG_LEVEL`.
 *
 * @example
 * ```sh
 * stint run send-invoice-email --once --max-runtime 4m --app @stint/examples/app
 * ```
 */
export function createApp(env: AppEnvironment): CompositionRoot {
  return createCompositionRoot({ connectionString: env.connectionString, schema: env.schema });
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
