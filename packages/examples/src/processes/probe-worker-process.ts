import "reflect-metadata";
import { createLogger } from "@stint/core";
import { createDatabase, PostgresJobStore } from "@stint/postgres-driver";
import { ProbeWorker } from "./probe-worker";

/**
 * A worker process for the multi-process tests and the benchmarks: drains
 * the probe queue of `STINT_SCHEMA` at `DATABASE_URL` with `CONCURRENCY`
 * slots, then prints one JSON line (the run summary and the peak RSS) and
 * exits 0. `RECORD_EXECUTIONS=1` records each handler run. SIGTERM stops it
 * gracefully.
 *
 * @example
 * ```sh
 * DATABASE_URL=postgres://… STINT_SCHEMA=bench CONCURRENCY=10 node dist/src/processes/probe-worker-process.js
 * ```
 */
async function main(): Promise<void> {
  const connectionString = requireEnv("DATABASE_URL");
  const schema = requireEnv("STINT_SCHEMA");
  const concurrency = Number(process.env["CONCURRENCY"] ?? "10");
  const database = createDatabase({ connectionString, applicationName: `stint:probe:${process.pid}`, maxConnections: concurrency + 4 });
  const control = createDatabase({ connectionString, applicationName: `stint:probe-control:${process.pid}`, maxConnections: 2 });
  const store = new PostgresJobStore({ db: database.db, controlDb: control.db, schema });
  const log = createLogger({ level: process.env["STINT_LOG_LEVEL"] ?? "warn", format: "json" });
  const record = process.env["RECORD_EXECUTIONS"] === "1" ? { db: database.db, schema } : undefined;
  const worker = new ProbeWorker(store, log, { concurrency, leaseMs: 30_000 }, record);
  const stop = new AbortController();
  process.once("SIGTERM", () => stop.abort());
  try {
    const summary = await worker.start({ signal: stop.signal });
    process.stdout.write(`${JSON.stringify({ summary, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
  } finally {
    await Promise.all([database.close(), control.close()]);
  }
}

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
