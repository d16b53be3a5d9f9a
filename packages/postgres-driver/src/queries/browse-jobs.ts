import type { JobState } from "@stint/core";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { finishedJobsTable } from "./finished-jobs";
import { jobsTable } from "./job-row";
import { jobSummaryColumns, toJobSummary, type JobSummary, type JobSummaryRow } from "./job-summary-row";
import { createdIdRange, type IdRange } from "./created-id-range";
import { finishedStatesAmong, groupOf, newestJobs } from "./newest-jobs";

/** What {@link browseJobs} takes. */
export interface BrowseJobsParams {
  /** Only jobs of this queue (any text: a queue written by SQL may break the naming rule). */
  readonly queue?: string;
  /** Only jobs in these states (at least one). */
  readonly states?: readonly JobState[];
  /** Only jobs of this group (`group` at enqueue). Not with `serialKey`. */
  readonly group?: string;
  /** Only jobs of this serial line (`serialKey` at enqueue). Not with `group`. */
  readonly serialKey?: string;
  /** Only jobs whose `last_error` contains this text, case-insensitively (matched literally: `%` and `_` are not wildcards). */
  readonly errorText?: string;
  /** Only jobs created at or after this instant. */
  readonly createdFrom?: Date;
  /** Only jobs created before this instant. */
  readonly createdTo?: Date;
  /** Only jobs whose `run_at` is still ahead on the database's clock: with the states `queued` (and `failed`), the jobs scheduled for later. */
  readonly scheduled?: boolean;
  /** Only jobs with a smaller id: the `nextBeforeId` of a page (the older page). */
  readonly beforeId?: string;
  /** Only jobs with a larger id: the `newerAfterId` of a page (the newer page). Not with `beforeId`. */
  readonly afterId?: string;
  /** At most this many jobs on the page. */
  readonly limit: number;
  /** With a searched filter (see {@link JobPage.searched}): look at no more than this many jobs per page. */
  readonly scanLimit: number;
}

/** Which of the optional indexes of migration 19 the schema has (see {@link browseJobs}). */
export interface BrowseIndexes {
  /** The trigram indexes on `last_error` (they need the `pg_trgm` extension). */
  readonly errorText: boolean;
}

/** A page of {@link browseJobs}. */
export interface JobPage {
  /** Newest first (by id). */
  readonly jobs: readonly JobSummary[];
  /** The `beforeId` of the older page, or `null` when no older job can match. */
  readonly nextBeforeId: string | null;
  /** The `afterId` of the newer page, or `null` when no newer job can match (the page is the newest). */
  readonly newerAfterId: string | null;
  /**
   * Set when a filter had to be searched for rather than read from an
   * index (the error text, when the schema has no trigram index or the
   * text has no three letters or digits in a row for one to use): the page
   * looked at the `scanned` jobs next to the cursor that match every other
   * filter, and `matched` of them matched the error text too. `complete`
   * is false when the search stopped at `scanLimit`: jobs further on may
   * match too (follow the cursor).
   */
  readonly searched: { readonly scanned: number; readonly matched: number; readonly complete: boolean } | null;
}

interface PageRow extends JobSummaryRow {
  readonly scanned: string;
  readonly lowest: string | null;
  readonly highest: string | null;
  readonly matched: string;
}

/**
 * A page of job summaries for a dashboard, newest first, with keyset
 * pagination on `id` in both directions (`beforeId` for the older page,
 * `afterId` for the newer one): every page costs the same however deep it
 * is, and nothing is counted beyond the page. Jobs are read from `jobs`
 * and `finished_jobs` together, each table cut at the page size on its own
 * (see `newestJobs`); `finished_jobs` is not read when only waiting or
 * running jobs are asked for.
 *
 * Every filter is read from an index, so the first page holds the
 * matching jobs however rare they are among millions:
 *
 * - the state: the partial index of the states asked for, or a walk of
 *   the id index that stops at the page;
 * - the queue: `jobs_claim_idx`, `jobs_lease_idx` and `jobs_finished_idx`
 *   in `jobs`, `finished_jobs_queue_idx` (`queue, state, id`) in the
 *   history, one group of states at a time;
 * - the creation time: ids grow with `created_at`, so the time range is
 *   first mapped to an id range by a binary search over the id indexes
 *   (see `createdIdRange`), widened by a margin for jobs whose enqueuing
 *   transaction was slow, and each row is then checked against
 *   `created_at` exactly;
 * - the group or serial line: with a queue, the indexes that lead with
 *   `(queue, group_key)` (see `newestJobs`); without one, a walk by id;
 * - the error text: the trigram indexes on `last_error` of migration 19.
 *
 * Where the schema has no trigram index (`indexes.errorText` false, when
 * `pg_trgm` could not be installed), or the text has no three letters or
 * digits in a row for one to use, the error text alone is searched for
 * within a bounded window: the `scanLimit` jobs next to the cursor that
 * pass every other filter, each marked with whether it matches. The page
 * then says how many it looked at and whether jobs further on remain.
 *
 * @example
 * ```ts
 * const page = await browseJobs(db, "stint", { states: ["dead"], errorText: "timeout", limit: 50, scanLimit: 10_000 }, { errorText: true });
 * const older = await browseJobs(db, "stint", { states: ["dead"], errorText: "timeout", limit: 50, scanLimit: 10_000, beforeId: page.nextBeforeId! }, { errorText: true });
 * const newer = await browseJobs(db, "stint", { states: ["dead"], errorText: "timeout", limit: 50, scanLimit: 10_000, afterId: older.newerAfterId! }, { errorText: true });
 * ```
 */
export async function browseJobs(
  executor: Kysely<any>,
  schema: string,
  params: BrowseJobsParams,
  indexes: BrowseIndexes = { errorText: false },
): Promise<JobPage> {
  let idRange: IdRange | undefined;
  if (params.createdFrom !== undefined || params.createdTo !== undefined) {
    idRange = await createdIdRange(executor, schema, { from: params.createdFrom, to: params.createdTo });
    if (idRange.low !== null && idRange.high !== null && BigInt(idRange.low) >= BigInt(idRange.high)) return emptyPage(params);
  }
  const statement = browseJobsStatement(schema, params, indexes, idRange);
  const { rows } = await statement.query.execute(executor);
  if (statement.searched) return searchedPage(rows as PageRow[], params);
  const found = (rows as JobSummaryRow[]).map(toJobSummary);
  return pageOf(params, found, found.length > params.limit, null);
}

/** Whether {@link browseJobs} can read `text` from the trigram indexes: it needs three letters or digits in a row. */
export function trigramSearchable(text: string): boolean {
  return /[\p{L}\p{N}]{3}/u.test(text);
}

/** The statement {@link browseJobs} runs, and whether it searches a window (exported for plan tests). */
export function browseJobsStatement(
  schema: string,
  params: BrowseJobsParams,
  indexes: BrowseIndexes = { errorText: false },
  idRange?: IdRange,
): { readonly query: RawBuilder<unknown>; readonly searched: boolean } {
  const indexed: RawBuilder<unknown>[] = [];
  const searched: RawBuilder<unknown>[] = [];
  if (params.beforeId !== undefined) indexed.push(sql`j.id < ${params.beforeId}::bigint`);
  if (params.afterId !== undefined) indexed.push(sql`j.id > ${params.afterId}::bigint`);
  if (idRange?.low != null) indexed.push(sql`j.id >= ${idRange.low}::bigint`);
  if (idRange?.high != null) indexed.push(sql`j.id < ${idRange.high}::bigint`);
  if (params.createdFrom !== undefined) indexed.push(sql`j.created_at >= ${params.createdFrom.toISOString()}::timestamptz`);
  if (params.createdTo !== undefined) indexed.push(sql`j.created_at < ${params.createdTo.toISOString()}::timestamptz`);
  if (params.scheduled === true) indexed.push(sql`j.run_at > now()`);
  if (params.errorText !== undefined) {
    const matches = sql`j.last_error ILIKE ${likePattern(params.errorText)}`;
    if (indexes.errorText && trigramSearchable(params.errorText)) indexed.push(sql`j.last_error IS NOT NULL`, matches);
    else searched.push(matches);
  }
  const order = params.afterId === undefined ? "desc" : "asc";
  const direction = order === "asc" ? sql`ASC` : sql`DESC`;
  const filters = {
    ...(params.states === undefined ? {} : { states: params.states }),
    ...(params.queue === undefined ? {} : { queue: params.queue }),
    ...groupOf(params),
    where: indexed,
    order,
  } as const;
  if (searched.length === 0) {
    return { searched: false, query: newestJobs(schema, { select: jobSummaryColumns("j"), ...filters, limit: params.limit + 1 }) };
  }
  const window = newestJobs(schema, { select: sql`j.id, (${sql.join(searched, sql` AND `)}) IS TRUE AS hit`, ...filters, limit: params.scanLimit });
  const shown = sql`j.id = ANY(ARRAY(SELECT id FROM shown))`;
  const pages = [sql`SELECT ${jobSummaryColumns("j")} FROM ${jobsTable(schema)} AS j WHERE ${shown}`];
  if (finishedStatesAmong(params.states).length > 0) pages.push(sql`SELECT ${jobSummaryColumns("j")} FROM ${finishedJobsTable(schema)} AS j WHERE ${shown}`);
  return {
    searched: true,
    query: sql`WITH win AS MATERIALIZED (
${window}),
stats AS (
  SELECT count(*) AS scanned, min(id) AS lowest, max(id) AS highest, count(*) FILTER (WHERE hit) AS matched FROM win),
shown AS MATERIALIZED (
  SELECT id FROM win WHERE hit ORDER BY id ${direction} LIMIT ${params.limit + 1}::integer)
SELECT stats.scanned, stats.lowest, stats.highest, stats.matched, page.*
  FROM stats
  LEFT JOIN LATERAL (
    ${sql.join(pages, sql` UNION ALL `)}) AS page ON true
 ORDER BY page.id ${direction}`,
  };
}

function searchedPage(rows: readonly PageRow[], params: BrowseJobsParams): JobPage {
  const stats = rows[0]!;
  const found = rows.filter((row) => row.id !== null).map(toJobSummary);
  const scanned = Number(stats.scanned);
  const complete = scanned < params.scanLimit;
  const edge = params.afterId === undefined ? stats.lowest : stats.highest;
  const beyond = found.length > params.limit || complete || edge === null ? null : String(edge);
  const page = pageOf(params, found, found.length > params.limit, beyond);
  return Object.freeze({ ...page, searched: Object.freeze({ scanned, matched: Number(stats.matched), complete }) });
}

/**
 * The page of `found` (in the order read: newest first, or oldest first
 * for a newer page), its cursors both ways. `more` says jobs beyond the
 * page match; `beyond`, where a searched window stopped short of them.
 */
function pageOf(params: BrowseJobsParams, found: readonly JobSummary[], more: boolean, beyond: string | null): JobPage {
  const read = found.slice(0, params.limit);
  const far = more ? read.at(-1)!.id : beyond;
  if (params.afterId === undefined) {
    const newest = read[0]?.id ?? (params.beforeId === undefined ? null : String(BigInt(params.beforeId) - 1n));
    return Object.freeze({ jobs: Object.freeze(read), nextBeforeId: far, newerAfterId: params.beforeId === undefined ? null : newest, searched: null });
  }
  const oldest = read[0]?.id ?? String(BigInt(params.afterId) + 1n);
  return Object.freeze({ jobs: Object.freeze([...read].reverse()), nextBeforeId: oldest, newerAfterId: far, searched: null });
}

function emptyPage(params: BrowseJobsParams): JobPage {
  return pageOf(params, [], false, null);
}

/** `text` as an `ILIKE` pattern that matches it literally anywhere. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}
