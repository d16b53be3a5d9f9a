import { registerLogger, registerWorkers } from "@stint/core";
import type { AppEnvironment, StintApp } from "@stint/cli";
import { registerPostgresDriver } from "@stint/postgres-driver";
import { container as rootContainer } from "tsyringe";
import { SendWelcomeWorker } from "./jobs/send-welcome";

/**
 * The composition root that `stint run --app ./dist/app.js` loads, and that
 * producers use to get a `JobClient`: the logger, the PostgreSQL store and
 * the workers, in a container of their own. A new job kind's worker joins
 * the list given to `registerWorkers`.
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
