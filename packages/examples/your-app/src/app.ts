import { registerLogger, registerWorkers } from "@stint/core";
import type { AppEnvironment, StintApp } from "@stint/cli";
import { registerPostgresDriver } from "@stint/postgres-driver";
import { container as rootContainer } from "tsyringe";
import { SendWelcomeWorker } from "./send-welcome-worker";

/**
 * The composition root: what `stint run --app ./dist/app.js` loads. A child
 * container with the logger, the PostgreSQL store and the workers.
 */
export function createApp(env: AppEnvironment): StintApp {
  const container = rootContainer.createChildContainer();
  registerLogger(container, { format: "json", ...(env.logLevel === undefined ? {} : { level: env.logLevel }) });
  const driver = registerPostgresDriver(container, { connectionString: env.connectionString, schema: env.schema });
  registerWorkers(container, [SendWelcomeWorker]);
  return {
    container,
    close: async () => {
      await container.dispose();
      await driver.close();
    },
  };
}
