import type { JobState } from "@stint/core";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { finishedJobsTable } from "./finished-jobs";
import { jobsTable } from "./job-row";
import { jobSummaryColumns, toJobSummary, type JobSummary, type JobSummaryRow } from "./job-summary-row";
import { finishedStatesAmong, newestJobs } from "./newest-jobs";

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
 * nothing is counted beyond the page. Jobs are read from `jobs` and
 * `finished_jobs` together, each table newest first and cut at the page
 * size on its own (see `newestJobs`); `finished_jobs` is not read when only
 * waiting or running jobs are asked for.
 *
 * Filters are of two kinds. The state and the `beforeId` bound are read
 * as index ranges — a primary key or id index walked backwards, or the
 * partial index of the states asked for; PostgreSQL's statistics of `state`
 * alone tell it well which is cheaper. Every other filter (the queue, the
 * error text, the time range) has no index that would pay for it, or only
 * one whose cost the planner misjudges when a queue has none of the states
 * asked for (measured: a walk of every row of a million), so it is
 * searched for within a bounded window: the newest `scanLimit` jobs that
 * pass the indexed filters, each marked with whether it matches the rest.
 * The page says how many it looked at and whether older ones remain; the
 * next page continues below the window. A search therefore looks at no
 * more than `scanLimit` jobs, however large the tables are.
 *
 * ### SQL (indexed filters only)
 * ```sql
 * SELECT * FROM (
 *   (SELECT j.id, j.queue, j.state, …, left(j.last_error, 300) AS error_head FROM "stint"."jobs" AS j
 *     WHERE true [AND j.id < $1::bigint] [AND j.state = ANY($2::text[])] ORDER BY j.id DESC LIMIT $3 + 1)
 *   UNION ALL
 *   (SELECT … FROM "stint"."finished_jobs" AS j WHERE … ORDER BY j.id DESC LIMIT $3 + 1)
 * ) AS newest ORDER BY newest.id DESC LIMIT $3 + 1
 * ```
 *
 * ### SQL (with a searched filter)
 * ```sql
 * WITH win AS MATERIALIZED (
 *   SELECT * FROM (
 *     (SELECT j.id, ([j.queue = $q] [AND j.last_error ILIKE $text] [AND j.created_at >= $from] …) IS TRUE AS hit
 *        FROM "stint"."jobs" AS j WHERE <indexed filters> ORDER BY j.id DESC LIMIT $scan)
 *     UNION ALL
 *     (SELECT j.id, (…) IS TRUE AS hit FROM "stint"."finished_jobs" AS j WHERE <indexed filters> ORDER BY j.id DESC LIMIT $scan)
 *   ) AS newest ORDER BY newest.id DESC LIMIT $scan),
 * stats AS (SELECT count(*) AS scanned, min(id) AS lowest, count(*) FILTER (WHERE hit) AS matched FROM win),
 * shown AS MATERIALIZED (SELECT id FROM win WHERE hit ORDER BY id DESC LIMIT $limit + 1)
 * SELECT stats.*, page.* FROM stats LEFT JOIN LATERAL (
 *   SELECT … FROM "stint"."jobs" AS j WHERE j.id = ANY(ARRAY(SELECT id FROM shown))
 *   UNION ALL
 *   SELECT … FROM "stint"."finished_jobs" AS j WHERE j.id = ANY(ARRAY(SELECT id FROM shown))) AS page ON true
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
  const indexed: RawBuilder<unknown>[] = [];
  const searched: RawBuilder<unknown>[] = [];
  if (params.queue !== undefined) searched.push(sql`j.queue = ${params.queue}`);
  if (params.beforeId !== undefined) indexed.push(sql`j.id < ${params.beforeId}::bigint`);
  if (params.errorText !== undefined) searched.push(sql`j.last_error ILIKE ${likePattern(params.errorText)}`);
  if (params.createdFrom !== undefined) searched.push(sql`j.created_at >= ${params.createdFrom.toISOString()}::timestamptz`);
  if (params.createdTo !== undefined) searched.push(sql`j.created_at < ${params.createdTo.toISOString()}::timestamptz`);
  const states = params.states === undefined ? {} : { states: params.states };
  if (searched.length === 0) {
    return { searched: false, query: newestJobs(schema, { select: jobSummaryColumns("j"), ...states, where: indexed, limit: params.limit + 1 }) };
  }
  const window = newestJobs(schema, {
    select: sql`j.id, (${sql.join(searched, sql` AND `)}) IS TRUE AS hit`,
    ...states,
    where: indexed,
    limit: params.scanLimit,
  });
  const shown = sql`j.id = ANY(ARRAY(SELECT id FROM shown))`;
  const pages = [sql`SELECT ${jobSummaryColumns("j")} FROM ${jobsTable(schema)} AS j WHERE ${shown}`];
  if (finishedStatesAmong(params.states).length > 0) pages.push(sql`SELECT ${jobSummaryColumns("j")} FROM ${finishedJobsTable(schema)} AS j WHERE ${shown}`);
  return {
    searched: true,
    query: sql`WITH win AS MATERIALIZED (
${window}),
stats AS (
  SELECT count(*) AS scanned, min(id) AS lowest, count(*) FILTER (WHERE hit) AS matched FROM win),
shown AS MATERIALIZED (
  SELECT id FROM win WHERE hit ORDER BY id DESC LIMIT ${params.limit + 1}::integer)
SELECT stats.scanned, stats.lowest, stats.matched, page.*
  FROM stats
  LEFT JOIN LATERAL (
    ${sql.join(pages, sql` UNION ALL `)}) AS page ON true
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
