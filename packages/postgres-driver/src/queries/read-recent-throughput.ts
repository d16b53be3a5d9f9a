import { sql, type Kysely, type RawBuilder } from "kysely";
import { finishedJobsTable } from "./finished-jobs";
import { jobsTable, millisecondsInterval } from "./job-row";

/** What {@link readRecentThroughput} takes. */
export interface RecentThroughputParams {
  /** How far back to count, in milliseconds (an hour for a dashboard). */
  readonly windowMs: number;
  /** Into how many equal buckets to split the window. */
  readonly buckets: number;
  /**
   * Count no more than about this many jobs: each bucket reads at most an
   * equal share, `ceil(scanLimit / buckets)`, of `finished_jobs`, and at
   * most `scanLimit` succeeded rows are read from `jobs`.
   */
  readonly scanLimit: number;
}

/** Succeeded jobs of one queue within the window. */
export interface QueueThroughput {
  readonly queue: string;
  /** Jobs counted as succeeded within the window. */
  readonly succeeded: number;
  /** The same jobs by when they finished, oldest bucket first. */
  readonly buckets: readonly number[];
}

/** What {@link readRecentThroughput} found. */
export interface RecentThroughput {
  readonly windowMs: number;
  readonly bucketMs: number;
  /** How many succeeded jobs were counted, in every queue and bucket together. */
  readonly scanned: number;
  /**
   * True when every job that succeeded within the window was counted: no
   * bucket reached its share of `scanLimit`. When false, the counts are
   * lower bounds.
   */
  readonly coversWindow: boolean;
  /** Age in milliseconds of the oldest finish counted, or `null` when no job succeeded within the window. */
  readonly oldestScannedAgeMs: number | null;
  /** Queues with jobs that succeeded within the window, by name. */
  readonly queues: readonly QueueThroughput[];
}

interface ThroughputRow {
  readonly queue: string | null;
  readonly bucket: number | null;
  readonly jobs: string;
  readonly oldest_age_ms: string | null;
  readonly capped: boolean | null;
}

/**
 * Jobs that succeeded within the last `windowMs`, per queue and per bucket
 * of finishing time, read by `finished_at` — the key `finished_jobs` is
 * partitioned by and has a BRIN index on — so the read of the history
 * touches the last window's partitions and block ranges only, however
 * much of it is kept. Each bucket reads its own time
 * range and stops at an equal share of `scanLimit`: the figures are exact
 * when no bucket reached its share (`coversWindow`), and otherwise lower
 * bounds spread evenly over the window rather than its newest part alone.
 * Block ranges the BRIN index has not summarized yet (the newest, until a
 * vacuum or autosummarize reaches them) match every bucket, so each bucket
 * reads them until it has its share.
 *
 * Succeeded rows an upgrade has not moved to `finished_jobs` yet are
 * counted too, from `jobs`; no index finds them there, so that part reads
 * `jobs` once (the work in flight, not the history), stopping at
 * `scanLimit` rows found.
 *
 * @example
 * ```ts
 * const hour = await readRecentThroughput(db, "stint", { windowMs: 3_600_000, buckets: 12, scanLimit: 50_000 });
 * for (const queue of hour.queues) console.log(queue.queue, queue.succeeded, hour.coversWindow ? "" : "(at least)");
 * ```
 */
export async function readRecentThroughput(executor: Kysely<any>, schema: string, params: RecentThroughputParams): Promise<RecentThroughput> {
  const bucketMs = Math.ceil(params.windowMs / params.buckets);
  const { rows } = await readRecentThroughputStatement(schema, params, bucketMs).execute(executor);
  const summary = rows.find((row) => row.queue === null);
  const scanned = Number(summary?.jobs ?? 0);
  const oldestScannedAgeMs = summary?.oldest_age_ms == null ? null : Number(summary.oldest_age_ms);
  const byQueue = new Map<string, { succeeded: number; buckets: number[] }>();
  for (const row of rows) {
    if (row.queue === null || row.bucket === null) continue;
    const entry = byQueue.get(row.queue) ?? { succeeded: 0, buckets: new Array<number>(params.buckets).fill(0) };
    byQueue.set(row.queue, entry);
    const jobs = Number(row.jobs);
    entry.succeeded += jobs;
    const index = params.buckets - 1 - Math.min(params.buckets - 1, Math.max(0, row.bucket));
    entry.buckets[index] = (entry.buckets[index] ?? 0) + jobs;
  }
  const queues = [...byQueue.keys()]
    .sort()
    .map((queue) => Object.freeze({ queue, succeeded: byQueue.get(queue)!.succeeded, buckets: Object.freeze(byQueue.get(queue)!.buckets) }));
  return Object.freeze({
    windowMs: params.windowMs,
    bucketMs,
    scanned,
    coversWindow: summary?.capped !== true,
    oldestScannedAgeMs,
    queues: Object.freeze(queues),
  });
}

/** How many succeeded jobs each bucket reads at most: its share of `scanLimit`. */
export function bucketShare(params: Pick<RecentThroughputParams, "scanLimit" | "buckets">): number {
  return Math.ceil(params.scanLimit / params.buckets);
}

/** The statement {@link readRecentThroughput} runs (exported for plan tests). */
export function readRecentThroughputStatement(schema: string, params: RecentThroughputParams, bucketMs: number): RawBuilder<ThroughputRow> {
  const share = sql`${bucketShare(params)}::integer`;
  const scanLimit = sql`${params.scanLimit}::integer`;
  const ago = (ms: RawBuilder<unknown>): RawBuilder<unknown> => sql`now() - (${ms})::double precision * interval '1 millisecond'`;
  return sql<ThroughputRow>`WITH finished AS MATERIALIZED (
  SELECT b.bucket, f.queue, f.jobs, f.oldest
    FROM generate_series(0, ${params.buckets - 1}::integer) AS b(bucket)
   CROSS JOIN LATERAL (
     SELECT r.queue, count(*) AS jobs, min(r.finished_at) AS oldest FROM (
       SELECT queue, finished_at FROM ${finishedJobsTable(schema)}
        WHERE state = 'succeeded'
          AND finished_at > ${ago(sql`least((b.bucket + 1) * ${bucketMs}::bigint, ${params.windowMs}::bigint)`)}
          AND finished_at <= ${ago(sql`b.bucket * ${bucketMs}::bigint`)}
        LIMIT ${share}) AS r
      GROUP BY r.queue) AS f),
unmoved AS MATERIALIZED (
  SELECT r.bucket, r.queue, count(*) AS jobs, min(r.finished_at) AS oldest FROM (
    SELECT floor(extract(epoch FROM now() - finished_at) * 1000 / ${bucketMs}::double precision)::integer AS bucket, queue, finished_at
      FROM ${jobsTable(schema)}
     WHERE state = 'succeeded' AND finished_at > now() - ${millisecondsInterval(params.windowMs)} AND finished_at <= now()
     LIMIT ${scanLimit}) AS r
   GROUP BY 1, 2),
counted AS (
  SELECT bucket, queue, jobs, oldest FROM finished
  UNION ALL
  SELECT bucket, queue, jobs, oldest FROM unmoved)
SELECT NULL::text AS queue, NULL::integer AS bucket, coalesce(sum(jobs), 0) AS jobs,
       floor(extract(epoch FROM now() - min(oldest)) * 1000)::bigint AS oldest_age_ms,
       EXISTS (SELECT FROM finished GROUP BY bucket HAVING sum(jobs) >= ${share})
         OR (SELECT coalesce(sum(jobs), 0) FROM unmoved) >= ${scanLimit} AS capped
  FROM counted
UNION ALL
SELECT queue, bucket, sum(jobs), NULL, NULL
  FROM counted
 GROUP BY 1, 2`;
}
