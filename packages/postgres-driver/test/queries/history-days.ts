import { buildNewJob } from "@stint/core/driver";
import { defineJob, type JobStore } from "@stint/core";
import { sql } from "kysely";
import type { TestSchema } from "../../src/testing";

/** How tests fake history: day partitions of past days, and finished jobs moved into them. */
export class HistoryDays {
  readonly #test: TestSchema;

  constructor(test: TestSchema) {
    this.#test = test;
  }

  /** Creates the day partitions from `from` days ago to `to` days ago (UTC), as the maintenance pass would have. */
  async make(from: number, to: number): Promise<void> {
    await sql`SELECT ${sql.id(this.#test.schema, "ensure_history_partitions")}(
      (now() AT TIME ZONE 'UTC')::date - ${from}::integer, (now() AT TIME ZONE 'UTC')::date - ${to}::integer)`.execute(this.#test.db);
  }

  /** The name of the day partition of `daysAgo` days ago. */
  async nameOf(daysAgo: number): Promise<string> {
    const { rows } = await sql<{
      name: string;
    }>`SELECT 'finished_jobs_' || to_char((now() AT TIME ZONE 'UTC')::date - ${daysAgo}::integer, 'YYYYMMDD') AS name`.execute(this.#test.db);
    return rows[0]!.name;
  }

  /** Whether the table `name` exists in the schema. */
  async exists(name: string): Promise<boolean> {
    const { rows } = await sql<{ found: boolean }>`SELECT to_regclass(format('%I.%I', ${this.#test.schema}::text, ${name}::text)) IS NOT NULL AS found`.execute(
      this.#test.db,
    );
    return rows[0]!.found;
  }

  /** Moves finished jobs to `daysAgo` days ago (`finished_at` at this time of that day): into that day's partition, or the kept one. */
  async backdate(ids: readonly string[], daysAgo: number): Promise<void> {
    await sql`UPDATE ${sql.id(this.#test.schema, "finished_jobs")} SET finished_at = now() - ${daysAgo}::integer * interval '1 day'
      WHERE id = ANY(${[...ids]}::bigint[])`.execute(this.#test.db);
  }

  /** The partition of `finished_jobs` that holds the job, or `undefined` when it is not there. */
  async partitionOf(id: string): Promise<string | undefined> {
    const { rows } = await sql<{ name: string }>`SELECT c.relname AS name FROM ${sql.id(this.#test.schema, "finished_jobs")} AS f
      JOIN pg_class AS c ON c.oid = f.tableoid WHERE f.id = ${id}::bigint`.execute(this.#test.db);
    return rows[0]?.name;
  }

  /** How many `job_attempts` rows the job has. */
  async attemptRows(id: string): Promise<number> {
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.id(this.#test.schema, "job_attempts")} WHERE job_id = ${id}::bigint`.execute(
      this.#test.db,
    );
    return Number(rows[0]!.n);
  }
}

/** `count` jobs of `queue` finished now as `how` (`retried` succeeds after a failed attempt, so it has attempt history); their ids. */
export async function finishJobs(store: JobStore, queue: string, how: "succeeded" | "dead" | "cancelled" | "retried", count: number): Promise<string[]> {
  const kind = defineJob<{ n: number }>(queue);
  const ids = (await store.enqueueMany(Array.from({ length: count }, (_, n) => buildNewJob(kind, { n })))).map((job) => job.id);
  if (how === "cancelled") {
    for (const id of ids) await store.cancelJob({ id });
    return ids;
  }
  let claimed = await store.claimBatch({ queue, workerId: "w", limit: count, leaseMs: 60_000 });
  if (how === "retried") {
    const failure = { message: "Error: try again", code: null };
    await store.scheduleRetries({ workerId: "w", jobs: claimed.map((job) => ({ id: job.id, attempt: job.attempt, delayMs: 0, failure, spendAttempt: true })) });
    claimed = await store.claimBatch({ queue, workerId: "w", limit: count, leaseMs: 60_000 });
  }
  if (how === "dead") {
    const failure = { message: "Error: no", code: null };
    await store.markJobsDead({ workerId: "w", jobs: claimed.map((job) => ({ id: job.id, attempt: job.attempt, failure })) });
  } else {
    await store.completeJobs({ workerId: "w", jobs: claimed.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: null, durationMs: 1 })) });
  }
  if (claimed.length !== count) throw new Error(`finished ${claimed.length} of ${count} jobs of ${queue}`);
  return ids;
}
