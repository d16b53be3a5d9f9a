import "reflect-metadata";
import { handleStopSignals, LOGGER, runFromContainer, WorkerEvents } from "@stint/core";
import { WORKER_EVENT_NAMES } from "@stint/core/internal";
import { createApp } from "./probe-app";

/**
 * A worker process for the multi-process tests and the benchmarks: runs the
 * probe queue of `STINT_SCHEMA` at `DATABASE_URL` through `runFromContainer`
 * (or the queues `PROBE_QUEUES` names, comma-separated: `probe-step` runs
 * workflow steps) — `MODE` `once` (default) or `loop`, with `MAX_RUNTIME_MS`,
 * `SHUTDOWN_TIMEOUT_MS`, `POLL_INTERVAL_MS` and `HEALTH_PORT` — then prints
 * one JSON line (the run report and the peak RSS) and exits with the
 * report's exit code. SIGTERM stops it gracefully; a second SIGTERM at once.
 *
 * @example
 * ```sh
 * DATABASE_URL=postgres://… STINT_SCHEMA=bench PROBE_CONCURRENCY=10 node packages/process-tests/dist/src/probe-worker-process.js
 * ```
 */
async function main(): Promise<number> {
  const app = createApp({ connectionString: requireEnv("DATABASE_URL"), schema: requireEnv("STINT_SCHEMA") });
  const stop = handleStopSignals(app.container.resolve(LOGGER));
  try {
    const report = await runFromContainer(app.container, {
      queues: (process.env["PROBE_QUEUES"] ?? "probe").split(","),
      mode: process.env["MODE"] === "loop" ? "loop" : "once",
      signal: stop.signal,
      ...numberFromEnv("maxRuntimeMs", "MAX_RUNTIME_MS"),
      ...numberFromEnv("shutdownTimeoutMs", "SHUTDOWN_TIMEOUT_MS"),
      ...numberFromEnv("pollIntervalMs", "POLL_INTERVAL_MS"),
      ...numberFromEnv("healthPort", "HEALTH_PORT"),
      ...(process.env["PROBE_OBSERVE"] === "1" ? observed() : {}),
    });
    process.stdout.write(`${JSON.stringify({ report, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
    return report.exitCode;
  } finally {
    stop.dispose();
    await app.close();
  }
}

/** `PROBE_OBSERVE=1`: Prometheus metrics on, and a listener on every worker event (what an observed deployment pays). */
function observed(): { readonly events: WorkerEvents; readonly metrics: object } {
  const events = new WorkerEvents();
  let heard = 0;
  for (const name of WORKER_EVENT_NAMES) events.on(name, () => void (heard += 1));
  process.once("beforeExit", () => process.stderr.write(`probe: heard ${heard} events\n`));
  return { events, metrics: {} };
}

function numberFromEnv<K extends string>(key: K, name: string): Partial<Record<K, number>> {
  const value = process.env[name];
  return value === undefined || value === "" ? {} : ({ [key]: Number(value) } as Record<K, number>);
}

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
