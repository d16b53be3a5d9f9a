import { registerLogger, registerWorkers, type LogLevel } from "@stint/core";
import { registerPostgresDriver } from "@stint/postgres-driver";
import { container as rootContainer, type DependencyContainer } from "tsyringe";
import { CHAOS_WORKER_DEPS, ChaosWorker, type ChaosWorkerSettings } from "./chaos-worker";
import { OracleWriter } from "./oracle-writer";

/**
 * The composition root of a chaos worker process: the PostgreSQL driver
 * (its connections named `stint:<role>:<process identity>`), the logger
 * (on standard error, JSON lines unless `STINT_LOG_FORMAT` says otherwise) and the {@link ChaosWorker}, wired with
 * the oracle's own pool.
 */
export function createChaosApp(env: {
  readonly connectionString: string;
  readonly schema: string;
  readonly settings: ChaosWorkerSettings;
  readonly logLevel?: LogLevel;
}): { readonly container: DependencyContainer; close(): Promise<void> } {
  const container = rootContainer.createChildContainer();
  registerLogger(container, env.logLevel === undefined ? { defaultLevel: "warn" } : { level: env.logLevel });
  const driver = registerPostgresDriver(container, {
    connectionString: env.connectionString,
    schema: env.schema,
    maxConnections: env.settings.concurrency + 2,
    statementTimeoutMs: 15_000,
    connectionTimeoutMs: 5_000,
    onPoolError: () => undefined,
  });
  const oracle = new OracleWriter(env.connectionString, env.schema, Math.min(env.settings.concurrency, 4) + 1);
  container.registerInstance(CHAOS_WORKER_DEPS, { settings: env.settings, oracle, schema: env.schema });
  registerWorkers(container, [ChaosWorker]);
  return {
    container,
    close: async () => {
      await container.dispose();
      await Promise.all([driver.close(), oracle.close()]);
    },
  };
}
