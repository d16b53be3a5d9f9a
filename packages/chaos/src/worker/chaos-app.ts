import { registerLogger, registerWorkers, type LogLevel } from "@stint/core";
import { registerPostgresDriver, type PostgresDriverOptions } from "@stint/postgres-driver";
import { container as rootContainer, type DependencyContainer } from "tsyringe";
import { CHAOS_WORKER_DEPS, ChaosWorker, type ChaosWorkerSettings } from "./chaos-worker";
import { OracleWriter } from "./oracle-writer";

/**
 * The driver's timeouts for a chaos worker, when a scenario sets them (a
 * cut network): each defaults to the suite's usual value.
 */
export type ChaosDriverSettings = Pick<PostgresDriverOptions, "statementTimeoutMs" | "queryTimeoutMs" | "controlStatementTimeoutMs" | "connectionTimeoutMs">;

/**
 * Driver timeouts for scenarios that cut or pause a worker: every statement
 * gives up well below a lease of a second or more (control statements,
 * the heartbeats, at 300 ms on the server; any answer at 500 ms on the
 * client), and a connection attempt that gets no answer fails in a second.
 */
export const FAIL_FAST_DRIVER: ChaosDriverSettings = Object.freeze({
  statementTimeoutMs: 400,
  queryTimeoutMs: 500,
  controlStatementTimeoutMs: 300,
  connectionTimeoutMs: 1_000,
});

/**
 * The composition root of a chaos worker process: the PostgreSQL driver
 * (its connections named `stint:<role>:<process identity>`), the logger
 * (on standard error, JSON lines unless `STINT_LOG_FORMAT` says otherwise) and the {@link ChaosWorker}, wired with
 * the oracle's own pool — on `oracleConnectionString` when given, so that
 * the oracle keeps recording when the worker's own network is cut.
 */
export function createChaosApp(env: {
  readonly connectionString: string;
  readonly oracleConnectionString?: string;
  readonly schema: string;
  readonly settings: ChaosWorkerSettings;
  readonly driver?: ChaosDriverSettings;
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
    ...env.driver,
    onPoolError: () => undefined,
  });
  const oracle = new OracleWriter(env.oracleConnectionString ?? env.connectionString, env.schema, Math.min(env.settings.concurrency, 4) + 1);
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
