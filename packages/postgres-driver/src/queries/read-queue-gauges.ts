import type { ReadQueueGaugesParams } from "@stint/core/driver";
import type { QueueGauges } from "@stint/core";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { earliestFinite } from "./count-by-queue";
import { finishedJobsTable } from "./finished-jobs";
import { jobsTable } from "./job-row";

interface GaugeRow {
  readonly queue: string;
  readonly state: "blocked" | "queued" | "failed" | "running" | "dead";
  readonly jobs: string;
  readonly due: string;
  readonly oldest_due_age_ms: string | null;
}

/**
 * The figures a metrics scrape reads, per queue, in one statement: jobs
 * `blocked`, `queued`, `failed` (retry scheduled), `running` and `dead`, the jobs due
 * now and the age of the oldest due one in milliseconds, on the database
 * clock. Each branch of the `UNION ALL` matches a partial index, so the
 * statement never reads the succeeded or cancelled history: the waiting
 * jobs through `jobs_claim_idx`, the running ones through `jobs_lease_idx`
 * and the dead ones (kept until retention drops them) through
 * `finished_jobs_dead_idx`, plus `jobs_finished_idx` for dead jobs an
 * upgrade has not moved to `finished_jobs` yet — both index-only scans,
 * since the indexes carry the queue. With `queues`, exactly those queues
 * are reported (zeros for a queue with no such jobs); without, every queue
 * that has waiting, running or dead jobs. Sorted by queue name.
 *
 * ### SQL
 * ```sql
 * SELECT queue, state, count(*) AS jobs, count(*) FILTER (WHERE run_at <= now()) AS due,
 *        floor(extract(epoch FROM now() - min(run_at) FILTER (WHERE run_at <= now())) * 1000) AS oldest_due_age_ms
 *   FROM "stint"."jobs" WHERE state IN ('queued', 'failed') [AND queue = ANY($1)] GROUP BY queue, state
 * UNION ALL SELECT queue, 'running', count(*), 0, NULL FROM "stint"."jobs" WHERE state = 'running' … GROUP BY queue
 * UNION ALL SELECT queue, 'blocked', count(*), 0, NULL FROM "stint"."jobs" WHERE state = 'blocked' … GROUP BY queue
 * UNION ALL SELECT queue, 'dead', count(*), 0, NULL FROM (
 *   SELECT queue FROM "stint"."finished_jobs" WHERE state = 'dead' …
 *   UNION ALL
 *   SELECT queue FROM "stint"."jobs" WHERE state = 'dead' …) AS dead GROUP BY queue
 * ```
 *
 * @example
 * ```ts
 * const [invoices] = await readQueueGauges(db, "stint", { queues: ["send-invoice"] });
 * console.log(invoices.due, invoices.oldestDueAgeMs);
 * ```
 */
export async function readQueueGauges(executor: Kysely<any>, schema: string, params: ReadQueueGaugesParams = {}): Promise<readonly QueueGauges[]> {
  const { rows } = await readQueueGaugesStatement(schema, params).execute(executor);
  const byQueue = new Map<string, Mutable<QueueGauges>>();
  for (const queue of params.queues ?? []) byQueue.set(queue, emptyGauges(queue));
  for (const row of rows) {
    const gauges = byQueue.get(row.queue) ?? emptyGauges(row.queue);
    byQueue.set(row.queue, gauges);
    gauges[row.state] = Number(row.jobs);
    gauges.due += Number(row.due);
    if (row.oldest_due_age_ms !== null) gauges.oldestDueAgeMs = Math.max(gauges.oldestDueAgeMs ?? 0, Number(row.oldest_due_age_ms));
  }
  return Object.freeze([...byQueue.keys()].sort().map((queue) => Object.freeze(byQueue.get(queue)!)));
}

/** The statement {@link readQueueGauges} runs (exported for plan tests). */
export function readQueueGaugesStatement(schema: string, params: ReadQueueGaugesParams): RawBuilder<GaugeRow> {
  const jobs = jobsTable(schema);
  const andQueue = params.queues === undefined ? sql`` : sql`AND queue = ANY(${[...params.queues]}::text[])`;
  return sql<GaugeRow>`SELECT queue, state, count(*) AS jobs,
       count(*) FILTER (WHERE run_at <= now()) AS due,
       floor(extract(epoch FROM now() - ${earliestFinite(sql`min(run_at) FILTER (WHERE run_at <= now())`)}) * 1000)::bigint AS oldest_due_age_ms
  FROM ${jobs}
 WHERE state IN ('queued', 'failed') ${andQueue}
 GROUP BY queue, state
UNION ALL
SELECT queue, 'running', count(*), 0, NULL FROM ${jobs} WHERE state = 'running' ${andQueue} GROUP BY queue
UNION ALL
SELECT queue, 'blocked', count(*), 0, NULL FROM ${jobs} WHERE state = 'blocked' ${andQueue} GROUP BY queue
UNION ALL
SELECT queue, 'dead', count(*), 0, NULL FROM (
  SELECT queue FROM ${finishedJobsTable(schema)} WHERE state = 'dead' ${andQueue}
  UNION ALL
  SELECT queue FROM ${jobs} WHERE state = 'dead' ${andQueue}) AS dead
 GROUP BY queue`;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function emptyGauges(queue: string): Mutable<QueueGauges> {
  return { queue, blocked: 0, queued: 0, failed: 0, running: 0, dead: 0, due: 0, oldestDueAgeMs: null };
}
