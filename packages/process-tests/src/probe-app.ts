import { defineSchedule, registerLogger, registerSchedules, registerWorkers } from "@stint/core";
import { registerPostgresDriver } from "@stint/postgres-driver";
import { container as rootContainer, type DependencyContainer } from "tsyringe";
import { ProbeJob } from "./probe-job";
import { PROBE_SETTINGS, ProbeWorker, type ProbeSettings } from "./probe-worker";
import { StepProbeWorker } from "./step-probe-worker";

/**
 * The probe application, in the shape `stint run --app` loads: a composition
 * root for the probe worker (queue `probe`) and the workflow steps' worker
 * (queue `probe-step`), configured by environment variables —
 * `PROBE_CONCURRENCY` (10), `PROBE_PREFETCH` (`auto`), `PROBE_LEASE_MS` (30000), `PROBE_SLEEP_MS` (0), `PROBE_BATCH_SIZE` (1),
 * `PROBE_DEAD_HOOK_SLEEP_MS` (0),
 * `RECORD_EXECUTIONS=1`, and `PROBE_SCHEDULE_CRON` (registers a schedule
 * `probe-tick` with `PROBE_SCHEDULE_CATCH_UP` missed fires caught up).
 *
 * @example
 * ```sh
 * stint run probe --once --app packages/process-tests/dist/src/probe-app.js
 * ```
 */
export function createApp(env: { readonly connectionString: string; readonly schema: string }): {
  readonly container: DependencyContainer;
  close(): Promise<void>;
} {
  const container = rootContainer.createChildContainer();
  registerLogger(container, { defaultLevel: "warn" });
  const settings = probeSettings();
  const driver = registerPostgresDriver(container, {
    connectionString: env.connectionString,
    schema: env.schema,
    applicationName: `stint:probe:${process.pid}`,
    maxConnections: settings.concurrency + 4,
  });
  const record = process.env["RECORD_EXECUTIONS"] === "1" ? { executions: { db: driver.db, schema: env.schema } } : {};
  container.registerInstance(PROBE_SETTINGS, { ...settings, ...record });
  registerWorkers(container, [ProbeWorker, StepProbeWorker]);
  const cron = process.env["PROBE_SCHEDULE_CRON"];
  if (cron) {
    registerSchedules(container, [
      defineSchedule({
        name: "probe-tick",
        job: ProbeJob,
        cron,
        payload: { seq: 0 },
        catchUp: Number(process.env["PROBE_SCHEDULE_CATCH_UP"] ?? "1"),
      }),
    ]);
  }
  return {
    container,
    close: async () => {
      await container.dispose();
      await driver.close();
    },
  };
}

function probeSettings(): ProbeSettings {
  return {
    concurrency: Number(process.env["PROBE_CONCURRENCY"] ?? "10"),
    ...(process.env["PROBE_PREFETCH"] ? { prefetch: Number(process.env["PROBE_PREFETCH"]) } : {}),
    leaseMs: Number(process.env["PROBE_LEASE_MS"] ?? "30000"),
    ...(process.env["PROBE_BATCH_SIZE"] ? { batchSize: Number(process.env["PROBE_BATCH_SIZE"]) } : {}),
    sleepMs: Number(process.env["PROBE_SLEEP_MS"] ?? "0"),
    deadHookSleepMs: Number(process.env["PROBE_DEAD_HOOK_SLEEP_MS"] ?? "0"),
  };
}
