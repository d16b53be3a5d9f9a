const { registerLogger, registerWorkers } = require("@stint/core");
const { registerPostgresDriver } = require("@stint/postgres-driver");
const { container: rootContainer } = require("tsyringe");
const { SendWelcomeWorker } = require("./jobs/send-welcome");

/**
 * The composition root that `stint run --app ./src/app.js` loads, and that
 * producers use to get a `JobClient`: the logger, the PostgreSQL store and
 * the workers, in a container of their own. A new job kind's worker joins
 * the list given to `registerWorkers`.
 *
 * @param {import("@stint/cli").AppEnvironment} env
 * @returns {import("@stint/cli").StintApp}
 */
function createApp(env) {
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

module.exports = { createApp };
