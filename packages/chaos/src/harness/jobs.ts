import type { EnqueueOptions } from "@stint/core";
import { buildNewJob, type NewJob } from "@stint/core/driver";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { ChaosJob, type ChaosTask } from "../worker/chaos-job";
import type { ChaosDatabase } from "./chaos-database";

/** Enqueues chaos jobs in batches; resolves with their ids, in order. */
export async function enqueueTasks(database: ChaosDatabase, tasks: readonly ChaosTask[], options: EnqueueOptions = {}): Promise<readonly string[]> {
  return enqueueRaw(
    database,
    tasks.map((task) => buildNewJob(ChaosJob, task, options)),
  );
}

/** Enqueues prepared rows (malformed payloads included) in batches of 5,000; resolves with their ids. */
export async function enqueueRaw(database: ChaosDatabase, jobs: readonly NewJob[]): Promise<readonly string[]> {
  const ids: string[] = [];
  for (let i = 0; i < jobs.length; i += 5_000) {
    const results = await database.store.enqueueMany(jobs.slice(i, i + 5_000));
    ids.push(...results.map((result) => result.id));
  }
  return ids;
}

/** `0, 1, …, n−1`. */
export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** Jobs not yet in a terminal state. */
export async function openJobs(database: ChaosDatabase): Promise<number> {
  const { open } = await figures(
    database.db,
    sql<{ open: number }>`
    SELECT count(*) AS open FROM ${sql.id(database.schema, "jobs")} WHERE state NOT IN ('succeeded', 'dead', 'cancelled')`,
  );
  return open;
}

/** Jobs by state, e.g. `{ succeeded: 998, dead: 2 }`. */
export async function jobStates(database: ChaosDatabase): Promise<Record<string, number>> {
  const { rows } = await sql<{ state: string; n: number }>`
    SELECT state, count(*)::int AS n FROM ${sql.id(database.schema, "all_jobs")} GROUP BY state`.execute(database.db);
  return Object.fromEntries(rows.map((row) => [row.state, row.n]));
}

/** Running jobs whose `locked_by` is `workerId`. */
export async function runningOwnedBy(database: ChaosDatabase, workerId: string): Promise<number> {
  const { n } = await figures(
    database.db,
    sql<{ n: number }>`
    SELECT count(*) AS n FROM ${sql.id(database.schema, "jobs")} WHERE state = 'running' AND locked_by = ${workerId}`,
  );
  return n;
}

/** The database's clock now (`clock_timestamp()`), so that a time taken here and one the audit records read one clock. */
export async function databaseNow(db: Kysely<any>): Promise<Date> {
  const { rows } = await sql<{ now: Date }>`SELECT clock_timestamp() AS now`.execute(db);
  return rows[0]!.now;
}

/** Waits `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs a query that returns one row of integer-like figures and returns them as numbers. */
export async function figures<K extends string>(db: Kysely<any>, query: RawBuilder<Record<K, unknown>>): Promise<Record<K, number>> {
  const { rows } = await query.execute(db);
  const row = rows[0] ?? ({} as Record<K, unknown>);
  return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value ?? 0)])) as Record<K, number>;
}
