import { JobClient, type EnqueueOptions } from "@stint/core";
import { createDatabase, PostgresJobStore } from "@stint/postgres-driver";
import { ProbeJob } from "./probe-job";

/**
 * A producer process for the multi-process tests: enqueues one probe job
 * (`PROBE_SEQ`) into `STINT_SCHEMA` at `DATABASE_URL` with the enqueue
 * options in `ENQUEUE_OPTIONS` (JSON; `startBy` as ISO text), prints the
 * result as one JSON line and exits. Several started at once are
 * concurrent enqueuers on connections of their own.
 *
 * @example
 * ```sh
 * DATABASE_URL=postgres://… STINT_SCHEMA=t PROBE_SEQ=1 ENQUEUE_OPTIONS='{"unique":{"key":"k","forMs":60000}}' node packages/process-tests/dist/src/probe-enqueue-process.js
 * ```
 */
async function main(): Promise<void> {
  const handle = createDatabase({ connectionString: requireEnv("DATABASE_URL"), maxConnections: 1 });
  try {
    const store = new PostgresJobStore({ db: handle.db, statements: handle.statements, schema: requireEnv("STINT_SCHEMA") });
    const given = JSON.parse(process.env["ENQUEUE_OPTIONS"] ?? "{}") as EnqueueOptions & { startBy?: string };
    const options: EnqueueOptions = { ...given, ...(given.startBy === undefined ? {} : { startBy: new Date(given.startBy) }) };
    const result = await new JobClient(store).enqueue(ProbeJob, { seq: Number(requireEnv("PROBE_SEQ")) }, options);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await handle.close();
  }
}

function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
