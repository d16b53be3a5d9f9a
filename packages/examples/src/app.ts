// The example application in the shape `stint run --app @stint/examples/app` loads.
import { createCompositionRoot, type CompositionRoot } from "./composition-root";

/**
 * Builds the example application for the CLI: the composition root over
 * the given database and schema, with worker logs at `STINT_LOG_LEVEL`.
 *
 * @example
 * ```sh
 * stint run send-invoice-email --once --max-runtime 4m --app @stint/examples/app
 * ```
 */
export function createApp(env: { readonly connectionString: string; readonly schema: string }): CompositionRoot {
  return createCompositionRoot({ connectionString: env.connectionString, schema: env.schema });
}
