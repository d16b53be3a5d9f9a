import type { JobState } from "@stint/core";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { jobsTable } from "./job-row";
import { jobSummaryColumns, toJobSummary, type JobSummary, type JobSummaryRow } from "./job-summary-row";

/** What {@link browseJobs} takes. */
export interface BrowseJobsParams {
  /** Only jobs of this queue. */
  readonly queue?: string;
  /** Only jobs in these states (at least one). */
  readonly states?: readonly JobState[];
  /** Only jobs whose `last_error` contains this text, case-insensitively (matched literally: `%` and `_` are not wildcards). */
  readonly errorText?: string;
  /** Only jobs created at or after this instant. */
  readonly createdFrom?: Date;
  /** Only jobs created before this instant. */
  readonly createdTo?: Date;
  /** Only jobs with a smaller id: the `nextBeforeId` of the previous page. */
  readonly beforeId?: string;
  /** At most this many jobs on the page. */
  readonly limit: number;
  /** With a searched filter (see {@link JobPage.searched}): look at no more than this many jobs per page. */
  readonly scanLimit: number;
}

/** A page of {@link browseJobs}. */
export interface JobPage {
  /** Newest first (by id). */
  readonly jobs: readonly JobSummary[];
  /** The `beforeId` of the next page, or `null` when no older job can match. */
  readonly nextBeforeId: string | null;
  /**
   * Set when a filter had to be searched for rather than read from an
   * index range (the queue, the error text, the time range): the page
   * looked at the newest `scanned` jobs below `beforeId` that match the
   * indexed filters, and `matched` of them matched every filter.
   * `complete` is false when the search stopped at `scanLimit`: older
   * jobs may match too (follow `nextBeforeId`).
   */
  readonly searched: { readonly scanned: number; readonly matched: number; readonly complete: boolean } | null;
}

interface PageRow extends JobSummaryRow {
  readonly scanned: string;
  readonly lowest: string | null;
  readonly matched: string;
}

/**
 * A page of job summaries for a dashboard, newest first, with keyset
 * pagination on `id`: every page costs the same however deep it is, and
 * nothing is counted beyond the page.
 *
 * Filters are of two kinds. The state and the `beforeId` bound are read
 * as index ranges — the primary key walked backwards, or the partial index
 * of the states asked for; PostgreSQL's statistics of `state` alone tell
 * it well which is cheaper. Every other filter (the queue, the error text,
 * the time range) has no index on the hot table that would pay for it, or
 * only one whose cost the planner misjudges when a queue has none of the
 * states asked for (measured: a walk of every row of a million), so it is
 * searched for within a bounded window: the newest `scanLimit` jobs that
 * pass the indexed filters. The page says how many
 * it looked at and whether older ones remain; the next page continues
 * below the window. A search therefore never reads more than `scanLimit`
 * rows, however large the table.
 *
 * ### SQL (indexed filters only)
 * ```sql
 * SELECT id, queue, state, …, left(last_error, 300) AS error_head FROM "stint"."jobs" AS j
 *  WHERE true [AND j.state = ANY($1::text[])] [AND j.id < $2::bigint]
 *  ORDER BY j.id DESC LIMIT $3 + 1
 * ```
 *
 * ### SQL (with a searched filter)
 * ```sql
 * WITH win AS MATERIALIZED (SELECT j.id FROM "stint"."jobs" AS j WHERE <indexed filters> ORDER BY j.id DESC LIMIT $scan),
 *      hits AS MATERIALIZED (SELECT j.id FROM "stint"."jobs" AS j WHERE j.id = ANY(ARRAY(SELECT id FROM win))
 *                              AND <indexed filters> [AND j.queue = $q] [AND j.last_error ILIKE $text] [AND j.created_at >= $from] …),
 *      stats AS (SELECT (SELECT count(*) FROM win) AS scanned, (SELECT min(id) FROM win) AS lowest, (SELECT count(*) FROM hits) AS matched)
 * SELECT stats.*, page.* FROM stats LEFT JOIN LATERAL (
 *   SELECT … FROM "stint"."jobs" AS j WHERE j.id = ANY(ARRAY(SELECT id FROM hits ORDER BY id DESC LIMIT $limit + 1))) AS page ON true
 *  ORDER BY page.id DESC
 * ```
 *
 * @example
 * ```ts
 * const page = await browseJobs(db, "stint", { states: ["dead"], errorText: "timeout", limit: 50, scanLimit: 10_000 });
 * const next = await browseJobs(db, "stint", { states: ["dead"], errorText: "timeout", limit: 50, scanLimit: 10_000, beforeId: page.nextBeforeId! });
 * ```
 */
export async function browseJobs(executor: Kysely<any>, schema: string, params: BrowseJobsParams): Promise<JobPage> {
  const statement = browseJobsStatement(schema, params);
  if (statement.searched) {
    const { rows } = await statement.query.execute(executor);
    return searchedPage(rows as PageRow[], params);
  }
  const { rows } = await statement.query.execute(executor);
  const more = rows.length > params.limit;
  const jobs = (rows as JobSummaryRow[]).slice(0, params.limit).map(toJobSummary);
  return Object.freeze({ jobs: Object.freeze(jobs), nextBeforeId: more ? jobs.at(-1)!.id : null, searched: null });
}

/** The statement {@link browseJobs} runs, and whether it searches a window (exported for plan tests). */
export function browseJobsStatement(schema: string, params: BrowseJobsParams): { readonly query: RawBuilder<unknown>; readonly searched: boolean } {
  const jobs = jobsTable(schema);
  const indexed: RawBuilder<unknown>[] = [sql`true`];
  const searched: RawBuilder<unknown>[] = [];
  if (params.states !== undefined) indexed.push(sql`j.state = ANY(${[...params.states]}::text[])`);
  if (params.queue !== undefined) searched.push(sql`j.queue = ${params.queue}`);
  if (params.beforeId !== undefined) indexed.push(sql`j.id < ${params.beforeId}::bigint`);
  if (params.errorText !== undefined) searched.push(sql`j.last_error ILIKE ${likePattern(params.errorText)}`);
  if (params.createdFrom !== undefined) searched.push(sql`j.created_at >= ${params.createdFrom.toISOString()}::timestamptz`);
  if (params.createdTo !== undefined) searched.push(sql`j.created_at < ${params.createdTo.toISOString()}::timestamptz`);
  const where = sql.join(indexed, sql` AND `);
  if (searched.length === 0) {
    return {
      searched: false,
      query: sql`SELECT ${jobSummaryColumns("j")}
  FROM ${jobs} AS j
 WHERE ${where}
 ORDER BY j.id DESC
 LIMIT ${params.limit + 1}::integer`,
    };
  }
  return {
    searched: true,
    query: sql`WITH win AS MATERIALIZED (
  SELECT j.id FROM ${jobs} AS j WHERE ${where} ORDER BY j.id DESC LIMIT ${params.scanLimit}::integer),
hits AS MATERIALIZED (
  SELECT j.id FROM ${jobs} AS j
   WHERE j.id = ANY(ARRAY(SELECT id FROM win)) AND ${where} AND ${sql.join(searched, sql` AND `)}),
stats AS (
  SELECT (SELECT count(*) FROM win) AS scanned, (SELECT min(id) FROM win) AS lowest, (SELECT count(*) FROM hits) AS matched)
SELECT stats.scanned, stats.lowest, stats.matched, page.*
  FROM stats
  LEFT JOIN LATERAL (
    SELECT ${jobSummaryColumns("j")}
      FROM ${jobs} AS j
     WHERE j.id = ANY(ARRAY(SELECT id FROM hits ORDER BY id DESC LIMIT ${params.limit + 1}::integer))) AS page ON true
 ORDER BY page.id DESC`,
  };
}

function searchedPage(rows: readonly PageRow[], params: BrowseJobsParams): JobPage {
  const stats = rows[0]!;
  const found = rows.filter((row) => row.id !== null);
  const jobs = found.slice(0, params.limit).map(toJobSummary);
  const scanned = Number(stats.scanned);
  const complete = scanned < params.scanLimit;
  const nextBeforeId = found.length > params.limit ? jobs.at(-1)!.id : complete || stats.lowest === null ? null : String(stats.lowest);
  return Object.freeze({
    jobs: Object.freeze(jobs),
    nextBeforeId,
    searched: Object.freeze({ scanned, matched: Number(stats.matched), complete }),
  });
}

/** `text` as an `ILIKE` pattern that matches it literally anywhere. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}
