import { buildNewJob } from "@stint/core/driver";
import type { TestSchema } from "@stint/postgres-driver/testing";
import { sql } from "kysely";
import { createExecutionsTable, ProbeJob, startProbeProcess } from "@stint/process-tests";

/** One row of the latency table, in milliseconds. */
export interface LatencyRow {
  readonly benchmark: string;
  readonly samples: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

const LATENCY_JOBS = 300;
const SPACING_MS = 10;

/**
 * Loop mode, enqueue → handler start: a loop-mode worker process waits
 * idle; 300 jobs are enqueued 10 ms apart, each in its own transaction; the
 * latency of a job is its handler's start (recorded by the handler) minus
 * its commit (`created_at`), both on the database clock.
 */
export async function benchLoopLatency(t: TestSchema): Promise<LatencyRow> {
  await createExecutionsTable(t.db, t.schema);
  const probe = startProbeProcess({ connectionString: t.connectionString, schema: t.schema, concurrency: 10, recordExecutions: true, env: { MODE: "loop" } });
  try {
    await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and query ilike 'LISTEN%'`.execute(t.db);
      return (rows[0]?.n ?? 0) > 0;
    });
    for (let seq = 0; seq < LATENCY_JOBS; seq += 1) {
      await t.store.enqueue(buildNewJob(ProbeJob, { seq }));
      await new Promise((resolve) => setTimeout(resolve, SPACING_MS));
    }
    await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.id(t.schema, "executions")}`.execute(t.db);
      return rows[0]?.n === LATENCY_JOBS;
    });
  } finally {
    probe.child.kill("SIGTERM");
    await probe.exited;
  }
  const { rows } = await sql<Omit<LatencyRow, "benchmark">>`
    select count(*)::int as samples,
           percentile_cont(0.5) within group (order by ms)::float8 as p50,
           percentile_cont(0.95) within group (order by ms)::float8 as p95,
           percentile_cont(0.99) within group (order by ms)::float8 as p99,
           max(ms)::float8 as max
      from (select extract(epoch from e.at - j.created_at) * 1000 as ms
              from ${sql.id(t.schema, "executions")} e join ${sql.id(t.schema, "all_jobs")} j on j.id = e.job_id) latencies`.execute(t.db);
  return { benchmark: `loop mode: enqueue → handler start (${LATENCY_JOBS} jobs, ${SPACING_MS} ms apart)`, ...rows[0]! };
}

/**
 * Once mode, process start → first claim: five runs of a fresh worker
 * process over a queue holding 1,000 jobs; from spawning the process to the
 * first job's `started_at`.
 */
export async function benchFirstClaim(t: TestSchema): Promise<LatencyRow> {
  const samples: number[] = [];
  for (let run = 0; run < 5; run += 1) {
    await t.store.enqueueMany(Array.from({ length: 1_000 }, (_, seq) => buildNewJob(ProbeJob, { seq })));
    const spawnedAt = Date.now();
    const probe = startProbeProcess({ connectionString: t.connectionString, schema: t.schema, concurrency: 10 });
    const { code } = await probe.exited;
    if (code !== 0) throw new Error(`once run exited with ${code}`);
    const { rows } = await sql<{ first: Date }>`select min(started_at) as first from ${sql.id(t.schema, "all_jobs")} where state = 'succeeded'`.execute(t.db);
    samples.push(rows[0]!.first.getTime() - spawnedAt);
    await sql`truncate ${sql.id(t.schema, "jobs")}, ${sql.id(t.schema, "finished_jobs")}`.execute(t.db);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number): number => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return {
    benchmark: "once mode: process start → first claim (5 runs)",
    samples: samples.length,
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    max: samples.at(-1)!,
  };
}

/** Formats latency rows as an aligned table. */
export function formatLatencyTable(rows: readonly LatencyRow[]): string {
  const header = ["latency (ms)", "samples", "p50", "p95", "p99", "max"];
  const body = rows.map((row) => [row.benchmark, String(row.samples), ...[row.p50, row.p95, row.p99, row.max].map((value) => value.toFixed(1))]);
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((cells) => cells[column]!.length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  ");
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...body.map(line)].join("\n");
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`benchmark condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
