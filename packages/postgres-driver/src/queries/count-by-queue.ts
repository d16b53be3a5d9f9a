import type { CountByQueueParams } from "@stint/core/driver";
import type { QueueCounts } from "@stint/core";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { allJobsView } from "./finished-jobs";
import { millisecondsInterval } from "./job-row";

interface CountRow {
  readonly queue: string;
  readonly blocked: string;
  readonly queued: string;
  readonly running: string;
  readonly failed: string;
  readonly succeeded: string;
  readonly dead: string;
  readonly cancelled: string;
  readonly due: string;
  readonly oldest_due_age_ms: string | null;
  readonly completed_since: string | null;
}

/**
 * Counts each queue's jobs by state, the jobs due now (`queued` or `failed`
 * with `run_at <= now()`) and the age of the oldest due one in milliseconds
 * (the queue lag), all on the database clock. A `run_at` of `-infinity`
 * counts as the earliest time PostgreSQL holds (4714 BC), so its age is
 * very large rather than an error. With `queues`, exactly those
 * queues are reported (zeros for a queue with no jobs); without, every queue
 * that has jobs. Sorted by queue name. Counts `jobs` and `finished_jobs`
 * together (the view `all_jobs`, so a job counts once in its state
 * wherever it is, including finished rows an upgrade has not moved yet).
 * Scans both tables: for dashboards and operators, not for the hot path.
 *
 * ### SQL
 * ```sql
 * SELECT queue, count(*) FILTER (WHERE state = 'queued') AS queued, …,
 *        count(*) FILTER (WHERE state IN ('queued', 'failed') AND run_at <= now()) AS due,
 *        floor(extract(epoch FROM now() - CASE WHEN m = '-infinity' THEN '4714-11-24 00:00:00+00 BC' ELSE m END) * 1000)
 *          AS oldest_due_age_ms   -- m: min(run_at) FILTER (WHERE …due…)
 *   FROM "stint"."all_jobs" [WHERE queue = ANY($1::text[])]
 *  GROUP BY queue ORDER BY queue
 * ```
 *
 * @example
 * ```ts
 * const [invoices] = await countByQueue(db, "stint", { queues: ["send-invoice"] });
 * console.log(invoices.counts.dead, invoices.oldestDueAgeMs);
 * ```
 */
export async function countByQueue(executor: Kysely<any>, schema: string, params: CountByQueueParams = {}): Promise<readonly QueueCounts[]> {
  const filter = params.queues === undefined ? sql`` : sql`WHERE queue = ANY(${[...params.queues]}::text[])`;
  const completed =
    params.completedSinceMs === undefined
      ? sql`NULL::bigint`
      : sql`count(*) FILTER (WHERE state = 'succeeded' AND finished_at > now() - ${millisecondsInterval(params.completedSinceMs)})`;
  const { rows } = await sql<CountRow>`SELECT queue,
       count(*) FILTER (WHERE state = 'blocked') AS blocked,
       count(*) FILTER (WHERE state = 'queued') AS queued,
       count(*) FILTER (WHERE state = 'running') AS running,
       count(*) FILTER (WHERE state = 'failed') AS failed,
       count(*) FILTER (WHERE state = 'succeeded') AS succeeded,
       count(*) FILTER (WHERE state = 'dead') AS dead,
       count(*) FILTER (WHERE state = 'cancelled') AS cancelled,
       count(*) FILTER (WHERE state IN ('queued', 'failed') AND run_at <= now()) AS due,
       floor(extract(epoch FROM now() - ${earliestFinite(sql`min(run_at) FILTER (WHERE state IN ('queued', 'failed') AND run_at <= now())`)}) * 1000)::bigint
         AS oldest_due_age_ms,
       ${completed} AS completed_since
  FROM ${allJobsView(schema)}
  ${filter}
 GROUP BY queue
 ORDER BY queue COLLATE "C"`.execute(executor);
  const found = new Map(rows.map((row) => [row.queue, toQueueCounts(row)]));
  if (params.queues === undefined) return Object.freeze([...found.values()]);
  const wanted = [...new Set(params.queues)].sort();
  const asked = params.completedSinceMs === undefined ? {} : { completedSince: 0 };
  return Object.freeze(wanted.map((queue) => found.get(queue) ?? emptyCounts(queue, asked)));
}

/** `time`, with `-infinity` replaced by the earliest finite time PostgreSQL holds (NULL stays NULL). */
export function earliestFinite(time: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(CASE WHEN ${time} = '-infinity'::timestamptz THEN '4714-11-24 00:00:00+00 BC'::timestamptz ELSE ${time} END)`;
}

function toQueueCounts(row: CountRow): QueueCounts {
  return Object.freeze({
    queue: row.queue,
    counts: Object.freeze({
      blocked: Number(row.blocked),
      queued: Number(row.queued),
      running: Number(row.running),
      failed: Number(row.failed),
      succeeded: Number(row.succeeded),
      dead: Number(row.dead),
      cancelled: Number(row.cancelled),
    }),
    due: Number(row.due),
    oldestDueAgeMs: row.oldest_due_age_ms === null ? null : Number(row.oldest_due_age_ms),
    ...(row.completed_since === null ? {} : { completedSince: Number(row.completed_since) }),
  });
}

function emptyCounts(queue: string, asked: { readonly completedSince?: number }): QueueCounts {
  return Object.freeze({
    ...asked,
    queue,
    counts: Object.freeze({ blocked: 0, queued: 0, running: 0, failed: 0, succeeded: 0, dead: 0, cancelled: 0 }),
    due: 0,
    oldestDueAgeMs: null,
  });
}
