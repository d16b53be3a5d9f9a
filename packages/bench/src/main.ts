import { readLogSettings } from "@stint/core";
import { buildNewJob, type NewJob } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { sql } from "kysely";
import { ProbeJob, spawnProbeWorkers } from "@stint/process-tests";
import { benchFirstClaim, benchLoopLatency, formatLatencyTable } from "./latency";
import { formatBenchTable, type BenchRow } from "./bench-table";
import { benchHistory, formatHistoryTable, type HistoryCondition } from "./history-bench";

const JOBS = Number(process.env["BENCH_JOBS"] ?? 50_000);
const ENQUEUE_BATCH = 10_000;
/** Finished jobs kept beside the history drains, comma-separated (e.g. `1000000,10000000`); `0` alone leaves them out. */
const RETAINED = (process.env["BENCH_RETAINED"] ?? "1000000")
  .split(",")
  .map(Number)
  .filter((count) => count > 0);
/** Queued jobs of the backlog drain; 0 leaves it out. */
const BACKLOG = Number(process.env["BENCH_BACKLOG"] ?? 1_000_000);
const HISTORY_ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 3);

/**
 * `npm run bench`: measures enqueueMany throughput, drain throughput of
 * no-op jobs (one process with concurrency 10, then two such processes) and
 * the peak RSS of every process, against DATABASE_URL, and prints a table.
 * Each benchmark gets a fresh schema. `BENCH_JOBS` changes the job count.
 * Then the drain and the latency beside kept history (`BENCH_RETAINED`
 * finished jobs, default 1,000,000) and after a backlog (`BENCH_BACKLOG`
 * queued jobs, default 1,000,000), side by side with an empty table over
 * `BENCH_ROUNDS` rounds (default 3).
 */
async function main(): Promise<void> {
  // The probe processes log with STINT_LOG_LEVEL and STINT_LOG_FORMAT: refuse a bad value before any schema is made.
  readLogSettings(process.env);
  const rows: BenchRow[] = [];
  rows.push(await benchEnqueueMany());
  rows.push(await benchDrain(1, 10));
  rows.push(await benchDrain(1, 10, true));
  rows.push(await benchDrain(2, 10));
  const latency = [await withSchema(benchLoopLatency), await withSchema(benchFirstClaim)];
  const server = await serverVersion();
  console.log(`\nstint benchmarks: ${JOBS.toLocaleString("en-US")} jobs, PostgreSQL ${server}, Node ${process.version}\n`);
  console.log(formatBenchTable(rows));
  console.log("");
  console.log(formatLatencyTable(latency));
  const conditions: HistoryCondition[] = [
    { label: "nothing else", retained: 0, backlog: 0 },
    ...RETAINED.map((retained) => ({ label: `${retained.toLocaleString("en-US")} finished jobs kept`, retained, backlog: 0 })),
    ...(BACKLOG > 0 ? [{ label: `${BACKLOG.toLocaleString("en-US")} queued (the whole backlog drained)`, retained: 0, backlog: BACKLOG }] : []),
  ];
  if (conditions.length > 1) {
    console.log("");
    console.log(formatHistoryTable(await benchHistory(conditions, JOBS, HISTORY_ROUNDS)));
  }
}

async function benchEnqueueMany(): Promise<BenchRow> {
  return withSchema(async (t) => {
    const jobs = probeJobs();
    const started = performance.now();
    for (let offset = 0; offset < jobs.length; offset += ENQUEUE_BATCH) {
      await t.store.enqueueMany(jobs.slice(offset, offset + ENQUEUE_BATCH));
    }
    const seconds = (performance.now() - started) / 1000;
    return {
      benchmark: "enqueueMany",
      jobs: JOBS,
      seconds,
      jobsPerSecond: JOBS / seconds,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      note: `batches of ${ENQUEUE_BATCH.toLocaleString("en-US")}, one statement each`,
    };
  });
}

/** Drains JOBS no-op jobs; `observed`: with metrics and a listener on every worker event. */
async function benchDrain(processes: number, concurrency: number, observed = false): Promise<BenchRow> {
  return withSchema(async (t) => {
    const jobs = probeJobs();
    for (let offset = 0; offset < jobs.length; offset += ENQUEUE_BATCH) {
      await t.store.enqueueMany(jobs.slice(offset, offset + ENQUEUE_BATCH));
    }
    const started = performance.now();
    const reports = await spawnProbeWorkers({
      connectionString: t.connectionString,
      schema: t.schema,
      processes,
      concurrency,
      ...(observed ? { env: { PROBE_OBSERVE: "1" } } : {}),
    });
    const wallSeconds = (performance.now() - started) / 1000;
    const { rows } = await sql<{ seconds: number; succeeded: number }>`
      select extract(epoch from max(finished_at) - min(started_at))::float8 as seconds, count(*)::int as succeeded
      from ${sql.id(t.schema, "all_jobs")} where state = 'succeeded'`.execute(t.db);
    const seconds = Number(rows[0]?.seconds ?? wallSeconds);
    const succeeded = rows[0]?.succeeded ?? 0;
    if (succeeded !== JOBS) throw new Error(`only ${succeeded} of ${JOBS} jobs succeeded`);
    return {
      benchmark: `drain, ${processes} process${processes > 1 ? "es" : ""} × concurrency ${concurrency}${observed ? ", events + metrics on" : ""}`,
      jobs: JOBS,
      seconds,
      jobsPerSecond: JOBS / seconds,
      peakRssMb: Math.max(...reports.map((report) => report.maxRssBytes)) / 1_048_576,
      note: `first claim to last completion; ${wallSeconds.toFixed(2)} s with process start-up`,
    };
  });
}

function probeJobs(): NewJob[] {
  return Array.from({ length: JOBS }, (_, seq) => buildNewJob(ProbeJob, { seq }));
}

async function withSchema<R>(work: (t: TestSchema) => Promise<R>): Promise<R> {
  const t = await createTestSchema({ prefix: "stint_bench" });
  try {
    return await work(t);
  } finally {
    await t.drop();
  }
}

async function serverVersion(): Promise<string> {
  return withSchema(async (t) => {
    const { rows } = await sql<{ v: string }>`select current_setting('server_version') as v`.execute(t.db);
    return rows[0]?.v ?? "unknown";
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
