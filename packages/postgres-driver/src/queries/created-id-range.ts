import { sql, type Kysely } from "kysely";
import { finishedJobsTable } from "./finished-jobs";
import { jobsTable } from "./job-row";

/**
 * How far the id range of a time range is widened on each side: a job's
 * `created_at` is the start of the transaction that enqueued it and its id
 * is drawn when the row is written, so ids follow `created_at` only up to
 * the length of that transaction. A job whose enqueuing transaction ran
 * longer than this may be missed at the edges of a time range. Every job
 * created within the margin is walked past by a page at that edge, so it
 * is kept short: a minute of jobs (60,000 at 1,000 jobs a second).
 */
export const CREATED_ID_MARGIN_MS = 60_000;

/** Ids to read for a range of creation times: `low <= id < high`, `null` for no bound. */
export interface IdRange {
  readonly low: string | null;
  readonly high: string | null;
}

/**
 * The range of ids that holds the jobs created within `[from, to)`, in
 * `jobs` and `finished_jobs` together, widened by
 * {@link CREATED_ID_MARGIN_MS} on each side. Ids grow with `created_at`,
 * so each bound is found by a binary search over the id indexes (about 40
 * probes of `jobs_pkey` and of each partition's `finished_jobs_id_idx`
 * for a range of a trillion ids), never a read of the rows between. The
 * range is a bound for an index walk: the rows in it are still checked
 * against `created_at` exactly.
 *
 * @example
 * ```ts
 * const range = await createdIdRange(db, "stint", { from: new Date(Date.now() - 3_600_000) });
 * // { low: "981204", high: null }: ids from 981204 up
 * ```
 */
export async function createdIdRange(
  executor: Kysely<any>,
  schema: string,
  bounds: { readonly from?: Date | undefined; readonly to?: Date | undefined },
): Promise<IdRange> {
  const low = bounds.from === undefined ? null : await firstIdCreatedAt(executor, schema, new Date(bounds.from.getTime() - CREATED_ID_MARGIN_MS));
  const high = bounds.to === undefined ? null : await firstIdCreatedAt(executor, schema, new Date(bounds.to.getTime() + CREATED_ID_MARGIN_MS));
  return Object.freeze({ low, high });
}

/**
 * The smallest id such that the jobs from it up were created at or after
 * `time`, as if ids followed `created_at` exactly (one past the largest id
 * when every job is older; `null` when there are no jobs).
 *
 * ### SQL
 * ```sql
 * WITH RECURSIVE search(lo, hi) AS (
 *   SELECT least(<min id of both tables>), greatest(<max id of both tables>) + 1
 *   UNION ALL
 *   SELECT CASE WHEN p.created_at < $1 THEN p.id + 1 ELSE s.lo END, CASE WHEN p.created_at < $1 THEN s.hi ELSE <mid> END
 *     FROM search AS s LEFT JOIN LATERAL (<the first job with id >= mid, in either table>) AS p ON true
 *    WHERE s.lo < s.hi)
 * SELECT lo FROM search WHERE lo >= hi
 * ```
 */
export async function firstIdCreatedAt(executor: Kysely<any>, schema: string, time: Date): Promise<string | null> {
  const jobs = jobsTable(schema);
  const finished = finishedJobsTable(schema);
  const at = sql`${time.toISOString()}::timestamptz`;
  const mid = sql`s.lo + (s.hi - s.lo) / 2`;
  const { rows } = await sql<{ lo: string | null }>`WITH RECURSIVE search(lo, hi) AS (
  SELECT least((SELECT min(id) FROM ${jobs}), (SELECT min(id) FROM ${finished})),
         greatest((SELECT max(id) FROM ${jobs}), (SELECT max(id) FROM ${finished})) + 1
  UNION ALL
  SELECT CASE WHEN p.created_at < ${at} THEN p.id + 1 ELSE s.lo END,
         CASE WHEN p.created_at < ${at} THEN s.hi ELSE ${mid} END
    FROM search AS s
    LEFT JOIN LATERAL (
      SELECT x.id, x.created_at FROM (
        (SELECT id, created_at FROM ${jobs} WHERE id >= ${mid} ORDER BY id LIMIT 1)
        UNION ALL
        (SELECT id, created_at FROM ${finished} WHERE id >= ${mid} ORDER BY id LIMIT 1)) AS x
       ORDER BY x.id LIMIT 1) AS p ON true
   WHERE s.lo < s.hi)
SELECT lo FROM search WHERE lo >= hi LIMIT 1`.execute(executor);
  return rows[0]?.lo == null ? null : String(rows[0].lo);
}
