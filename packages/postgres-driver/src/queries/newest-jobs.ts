import { FINISHED_JOB_STATES, type JobState } from "@stint/core";
import { sql, type RawBuilder } from "kysely";
import { finishedJobsTable } from "./finished-jobs";
import { jobsTable } from "./job-row";

/**
 * Of `states` (every state when left out), those a row of `finished_jobs`
 * can be in; empty when a read of `finished_jobs` would find nothing.
 *
 * @example
 * ```ts
 * finishedStatesAmong(["queued", "dead"]); // ["dead"]
 * finishedStatesAmong(undefined); // ["succeeded", "dead", "cancelled"]
 * ```
 */
export function finishedStatesAmong(states: readonly JobState[] | undefined): readonly JobState[] {
  return states === undefined ? FINISHED_JOB_STATES : FINISHED_JOB_STATES.filter((state) => states.includes(state));
}

/** What {@link newestJobs} reads. */
export interface NewestJobsParts {
  /** The select list, of a table aliased `j`; it must include `j.id` as `id`. */
  readonly select: RawBuilder<unknown>;
  /** Only jobs in these states (every state when left out). */
  readonly states?: readonly JobState[];
  /** Further conditions on `j`, the same in both tables. */
  readonly where: readonly RawBuilder<unknown>[];
  /** At most this many rows. */
  readonly limit: number;
}

/**
 * The newest `limit` jobs by id that match, wherever they are: a page of
 * `jobs` and a page of `finished_jobs`, each read newest first and cut at
 * `limit` on its own, then merged. `jobs` is always read, since it still
 * holds the finished rows an upgrade has not moved yet; `finished_jobs` only
 * when a state asked for can be there, so a read of waiting or running jobs
 * never touches the history.
 *
 * Each table's page is a subquery with its own `ORDER BY … LIMIT`, so the
 * planner costs it as the whole read it may be: a state that `jobs` has
 * none of (`dead`, now that finished jobs move) is read through its partial
 * index and sorted, instead of a walk of the primary key that reaches the
 * end of the table before it gives up (measured: every one of 50,000
 * queued jobs walked for a page of dead ones, when the two tables were read
 * as one `UNION ALL` under a single `LIMIT`).
 *
 * ### SQL
 * ```sql
 * SELECT * FROM (
 *   (SELECT <select> FROM "stint"."jobs" AS j
 *     WHERE <where> [AND j.state = ANY($1::text[])] ORDER BY j.id DESC LIMIT $2)
 *   UNION ALL
 *   (SELECT <select> FROM "stint"."finished_jobs" AS j
 *     WHERE <where> [AND j.state = ANY($3::text[])] ORDER BY j.id DESC LIMIT $2)
 * ) AS newest ORDER BY newest.id DESC LIMIT $2
 * ```
 *
 * @example
 * ```ts
 * const page = newestJobs("stint", { select: sql`j.id, j.state`, states: ["dead"], where: [sql`j.id < ${beforeId}::bigint`], limit: 50 });
 * ```
 */
export function newestJobs<R>(schema: string, parts: NewestJobsParts): RawBuilder<R> {
  const limit = sql`${parts.limit}::integer`;
  const page = (table: RawBuilder<unknown>, states: readonly JobState[] | undefined): RawBuilder<unknown> => {
    const conditions = [sql`true`, ...parts.where];
    if (states !== undefined) conditions.push(sql`j.state = ANY(${[...states]}::text[])`);
    return sql`(SELECT ${parts.select} FROM ${table} AS j
  WHERE ${sql.join(conditions, sql` AND `)}
  ORDER BY j.id DESC LIMIT ${limit})`;
  };
  const finished = finishedStatesAmong(parts.states);
  const pages = [page(jobsTable(schema), parts.states)];
  if (finished.length > 0) pages.push(page(finishedJobsTable(schema), parts.states === undefined ? undefined : finished));
  return sql<R>`SELECT * FROM (
${sql.join(pages, sql`\nUNION ALL\n`)}
) AS newest
 ORDER BY newest.id DESC
 LIMIT ${limit}`;
}
