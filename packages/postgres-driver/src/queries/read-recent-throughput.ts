import { sql, type Kysely, type RawBuilder } from "kysely";
import { jobsTable, millisecondsInterval } from "./job-row";

/** What {@link readRecentThroughput} takes. */
export interface RecentThroughputParams {
  /** How far back to count, in milliseconds (an hour for a dashboard). */
  readonly windowMs: number;
  /** Into how many equal buckets to split the window. */
  readonly buckets: number;
  /** Look at no more than this many of the newest jobs. */
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
  /** How many of the newest jobs were looked at. */
  readonly scanned: number;
  /**
   * True when the jobs looked at include every job created within the
   * window (the look-back reached older jobs, or the whole table). When
   * false, the counts are lower bounds.
   */
  readonly coversWindow: boolean;
  /** Age in milliseconds of the oldest job looked at, or `null` for an empty table. */
  readonly oldestScannedAgeMs: number | null;
  /** Queues with jobs that succeeded within the window, by name. */
  readonly queues: readonly QueueThroughput[];
}

interface ThroughputRow {
  readonly queue: string | null;
  readonly bucket: number | null;
  readonly jobs: string;
  readonly oldest_age_ms: string | null;
}

/**
 * Jobs that succeeded within the last `windowMs`, per queue and per bucket
 * of finishing time — an estimate read from the newest `scanLimit` jobs
 * (the primary key walked backwards), not from an index on `finished_at`:
 * succeeded jobs are the bulk of the table and indexing them would cost
 * every completion an index insert. A job created before the oldest job
 * looked at and finished within the window is not counted; when the
 * look-back does not even reach the start of the window (more jobs were
 * created within it than `scanLimit`), `coversWindow` is false and the
 * figures are lower bounds.
 *
 * ### SQL
 * ```sql
 * WITH recent AS MATERIALIZED (
 *   SELECT queue, state, created_at, finished_at FROM "stint"."jobs" ORDER BY id DESC LIMIT $1)
 * SELECT NULL AS queue, NULL AS bucket, count(*) AS jobs, floor(extract(epoch FROM now() - min(created_at)) * 1000) AS oldest_age_ms FROM recent
 * UNION ALL
 * SELECT queue, floor(extract(epoch FROM now() - finished_at) * 1000 / $2)::integer, count(*), NULL FROM recent
 *  WHERE state = 'succeeded' AND finished_at > now() - $3 * interval '1 millisecond' AND finished_at <= now()
 *  GROUP BY 1, 2
 * ```
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
    coversWindow: scanned < params.scanLimit || (oldestScannedAgeMs !== null && oldestScannedAgeMs >= params.windowMs),
    oldestScannedAgeMs,
    queues: Object.freeze(queues),
  });
}

/** The statement {@link readRecentThroughput} runs (exported for plan tests). */
export function readRecentThroughputStatement(schema: string, params: RecentThroughputParams, bucketMs: number): RawBuilder<ThroughputRow> {
  return sql<ThroughputRow>`WITH recent AS MATERIALIZED (
  SELECT queue, state, created_at, finished_at FROM ${jobsTable(schema)} ORDER BY id DESC LIMIT ${params.scanLimit}::integer)
SELECT NULL::text AS queue, NULL::integer AS bucket, count(*) AS jobs,
       floor(extract(epoch FROM now() - min(created_at)) * 1000)::bigint AS oldest_age_ms
  FROM recent
UNION ALL
SELECT queue, floor(extract(epoch FROM now() - finished_at) * 1000 / ${bucketMs}::double precision)::integer, count(*), NULL
  FROM recent
 WHERE state = 'succeeded' AND finished_at > now() - ${millisecondsInterval(params.windowMs)} AND finished_at <= now()
 GROUP BY 1, 2`;
}
