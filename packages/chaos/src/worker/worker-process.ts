import "reflect-metadata";
import { handleStopSignals, LOGGER, runFromContainer, type LogLevel } from "@stint/core";
import { processIdentity } from "@stint/core/internal";
import { ChaosJob } from "./chaos-job";
import { createChaosApp, type ChaosDriverSettings } from "./chaos-app";
import type { ChaosWorkerSettings } from "./chaos-worker";

/** What the harness passes a worker process in `CHAOS_WORKER` (JSON). */
export interface ChaosProcessSettings extends ChaosWorkerSettings {
  /** `loop` (a Deployment) or `once` (a CronJob run). */
  readonly mode: "once" | "loop";
  readonly pollIntervalMs?: number;
  readonly maxRuntimeMs?: number;
  /** Fixes the level; default `STINT_LOG_LEVEL`, else `warn`. */
  readonly logLevel?: LogLevel;
  /** The driver's timeouts, when the scenario sets them. */
  readonly driver?: ChaosDriverSettings;
}

/**
 * A chaos worker process: runs the chaos queue of `STINT_SCHEMA` at
 * `DATABASE_URL` through `runFromContainer`, the way `stint run` does
 * (its oracle writes go to `CHAOS_ORACLE_URL` when set).
 * Prints `{"event":"ready",…}` with its process identity before the first
 * claim and `{"event":"report",…}` when the run ends, then exits with the
 * report's code. SIGTERM stops it gracefully; a second SIGTERM at once.
 */
async function main(): Promise<number> {
  const settings = JSON.parse(requireEnv("CHAOS_WORKER")) as ChaosProcessSettings;
  const app = createChaosApp({
    connectionString: requireEnv("DATABASE_URL"),
    ...(process.env["CHAOS_ORACLE_URL"] ? { oracleConnectionString: process.env["CHAOS_ORACLE_URL"] } : {}),
    schema: requireEnv("STINT_SCHEMA"),
    settings,
    ...(settings.driver === undefined ? {} : { driver: settings.driver }),
    ...(settings.logLevel === undefined ? {} : { logLevel: settings.logLevel }),
  });
  const stop = handleStopSignals(app.container.resolve(LOGGER));
  try {
    process.stdout.write(`${JSON.stringify({ event: "ready", pid: process.pid, identity: processIdentity() })}\n`);
    const report = await runFromContainer(app.container, {
      queues: [ChaosJob.name],
      mode: settings.mode,
      signal: stop.signal,
      retention: false,
      ...(settings.pollIntervalMs === undefined ? {} : { pollIntervalMs: settings.pollIntervalMs }),
      ...(settings.maxRuntimeMs === undefined ? {} : { maxRuntimeMs: settings.maxRuntimeMs }),
      ...(settings.shutdownTimeoutMs === undefined ? {} : { shutdownTimeoutMs: settings.shutdownTimeoutMs }),
    });
    process.stdout.write(`${JSON.stringify({ event: "report", report })}\n`);
    return report.exitCode;
  } finally {
    stop.dispose();
    await app.close();
  }
}

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

main().then(
  (code) => {
    process.exitCode = code;
    // Like `stint run` (which waits 5 s): a handler that ignored its signal must not keep the process alive.
    setTimeout(() => process.exit(), 1_000).unref();
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
