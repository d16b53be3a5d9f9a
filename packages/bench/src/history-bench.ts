import { buildNewJob, type NewJob } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { sql } from "kysely";
import { ProbeJob, spawnProbeWorkers } from "@stint/process-tests";
import { benchLoopLatency, type LatencyRow } from "./latency";

/** What the drain sees beside it: nothing, finished jobs kept for days, or a backlog of queued ones. */
export interface HistoryCondition {
  readonly label: string;
  /** Finished jobs kept (succeeded over the last three days), seeded before the first round. */
  readonly retained: number;
  /** Queued jobs of the drained queue waiting ahead of the measured ones (the whole backlog is drained once). */
  readonly backlog: number;
}

/** One condition's results over every round. */
export interface HistoryResult {
  readonly condition: HistoryCondition;
  /** Drain rate of each round, jobs per second. */
  readonly drains: number[];
  readonly latency?: LatencyRow;
}

const SEED_CHUNK = 1_000_000;
const ENQUEUE_BATCH = 10_000;

/**
 * Drains beside history, side by side: one schema per condition, seeded
 * once, then `rounds` rounds that each drain `jobs` fresh no-op jobs in
 * every schema in turn (one worker process × concurrency 10, the W3 shape),
 * so a slow moment of the machine falls on every condition alike. Then the
 * loop-mode latency (W5 shape) in each schema that keeps history. A backlog
 * condition instead drains its whole backlog once, in the first round.
 *
 * @example
 * ```ts
 * const results = await benchHistory([{ label: "empty", retained: 0, backlog: 0 }, { label: "1M kept", retained: 1e6, backlog: 0 }], 20_000, 3);
 * ```
 */
export async function benchHistory(conditions: readonly HistoryCondition[], jobs: number, rounds: number): Promise<HistoryResult[]> {
  const schemas: TestSchema[] = [];
  try {
    for (const condition of conditions) {
      const t = await createTestSchema({ prefix: "stint_bench" });
      schemas.push(t);
      await seedHistory(t, condition.retained);
      await seedBacklog(t, condition.backlog);
    }
    const results: HistoryResult[] = conditions.map((condition) => ({ condition, drains: [] }));
    for (let round = 0; round < rounds; round += 1) {
      for (const [index, t] of schemas.entries()) {
        const { condition, drains } = results[index]!;
        if (condition.backlog > 0 && round > 0) continue;
        drains.push(await drain(t, condition.backlog > 0 ? 0 : jobs));
      }
    }
    for (const [index, result] of results.entries()) {
      if (result.condition.backlog === 0) results[index] = { ...result, latency: await benchLoopLatency(schemas[index]!) };
    }
    return results;
  } finally {
    for (const t of schemas) await t.drop();
  }
}

/** Succeeded jobs of the probe queue that finished over the last three days, straight into the history, then analysed. */
async function seedHistory(t: TestSchema, rows: number): Promise<void> {
  if (rows === 0) return;
  await sql`SELECT ${sql.id(t.schema, "ensure_history_partitions")}((now() AT TIME ZONE 'UTC')::date - 4, (now() AT TIME ZONE 'UTC')::date)`.execute(t.db);
  for (let first = 1; first <= rows; first += SEED_CHUNK) {
    const last = Math.min(rows, first + SEED_CHUNK - 1);
    await sql`INSERT INTO ${sql.id(t.schema, "finished_jobs")}
        (id, queue, payload, state, attempts, locked_by, created_at, run_at, started_at, finished_at, updated_at, duration_ms)
      SELECT nextval(${`"${t.schema}".jobs_id_seq`}::regclass), ${ProbeJob.name}, jsonb_build_object('seq', g), 'succeeded', 1, 'seed',
             f - interval '2 ms', f - interval '2 ms', f - interval '1 ms', f, f, 1
        FROM generate_series(${first}::bigint, ${last}::bigint) AS g,
             LATERAL (SELECT now() - g * (interval '3 days' / ${rows}::bigint) AS f) AS at`.execute(t.db);
  }
  await sql`VACUUM ANALYZE ${sql.id(t.schema, "finished_jobs")}`.execute(t.db);
}

/** Queued probe jobs waiting ahead of the drain. */
async function seedBacklog(t: TestSchema, rows: number): Promise<void> {
  for (let offset = 0; offset < rows; offset += ENQUEUE_BATCH) {
    await t.store.enqueueMany(probeJobs(Math.min(ENQUEUE_BATCH, rows - offset)));
  }
  if (rows > 0) await sql`VACUUM ANALYZE ${sql.id(t.schema, "jobs")}`.execute(t.db);
}

/** Enqueues `jobs` more probe jobs and drains the queue; returns jobs per second from the first claim to the last completion. */
async function drain(t: TestSchema, jobs: number): Promise<number> {
  for (let offset = 0; offset < jobs; offset += ENQUEUE_BATCH) {
    await t.store.enqueueMany(probeJobs(Math.min(ENQUEUE_BATCH, jobs - offset)));
  }
  const { rows: before } = await sql<{ since: Date }>`SELECT now() AS since`.execute(t.db);
  await spawnProbeWorkers({ connectionString: t.connectionString, schema: t.schema, processes: 1, concurrency: 10 });
  const { rows } = await sql<{ seconds: number; succeeded: number }>`
    SELECT extract(epoch FROM max(finished_at) - min(started_at))::float8 AS seconds, count(*)::int AS succeeded
      FROM ${sql.id(t.schema, "finished_jobs")} WHERE state = 'succeeded' AND finished_at >= ${before[0]!.since}`.execute(t.db);
  const drained = rows[0]?.succeeded ?? 0;
  if (drained === 0) throw new Error("the drain finished no job");
  return drained / Number(rows[0]!.seconds);
}

function probeJobs(count: number): NewJob[] {
  return Array.from({ length: count }, (_, seq) => buildNewJob(ProbeJob, { seq }));
}

/**
 * The results as a table: each condition's median drain rate, its ratio to
 * the first condition's (the empty table), and its latency.
 *
 * @example
 * ```ts
 * console.log(formatHistoryTable(await benchHistory(conditions, 20_000, 3)));
 * ```
 */
export function formatHistoryTable(results: readonly HistoryResult[]): string {
  const baseline = median(results[0]?.drains ?? []);
  const header = ["beside the drain", "drain jobs/s (median)", "rounds", "× empty", "latency p50 (ms)", "p95"];
  const body = results.map((result) => {
    const rate = median(result.drains);
    return [
      result.condition.label,
      Math.round(rate).toLocaleString("en-US"),
      result.drains.map((value) => Math.round(value).toLocaleString("en-US")).join(" / "),
      (rate / baseline).toFixed(2),
      result.latency === undefined ? "–" : result.latency.p50.toFixed(1),
      result.latency === undefined ? "–" : result.latency.p95.toFixed(1),
    ];
  });
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((cells) => cells[column]!.length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, column) => (column === 0 || column === 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  ");
  return [line(header), widths.map((width) => "-".repeat(width)).join("  "), ...body.map(line)].join("\n");
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
