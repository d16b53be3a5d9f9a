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
  /** Only jobs of this queue: each table is then read one group of states at a time, through the index that holds the queue (see {@link newestJobs}). */
  readonly queue?: string;
  /**
   * Only jobs of this group (`serial: false`) or serial line (`serial:
   * true`): `j.group_key = key AND j.serial IS [NOT] NULL`, read from the
   * indexes that lead with `(queue, group_key)` when a queue is given too
   * (see {@link newestJobs}).
   */
  readonly group?: GroupFilter;
  /** Further conditions on `j`, the same in both tables. */
  readonly where: readonly RawBuilder<unknown>[];
  /** At most this many rows. */
  readonly limit: number;
  /** `"desc"` (the default): the newest jobs. `"asc"`: the oldest jobs that match, oldest first — the page above a cursor. */
  readonly order?: "asc" | "desc";
}

/** A group or a serial line, by key (see {@link NewestJobsParts.group}). */
export interface GroupFilter {
  readonly key: string;
  readonly serial: boolean;
}

/** The group filter of `params`: `group` or `serialKey`, as `newestJobs` takes it. */
export function groupOf(params: { readonly group?: string; readonly serialKey?: string }): { readonly group?: GroupFilter } {
  if (params.group !== undefined) return { group: { key: params.group, serial: false } };
  if (params.serialKey !== undefined) return { group: { key: params.serialKey, serial: true } };
  return {};
}

/** The conditions on `j` of {@link GroupFilter}; `group_key <> ''` lets the planner use the partial indexes of grouped jobs. */
export function groupConditions(group: GroupFilter): RawBuilder<unknown>[] {
  return [sql`j.group_key = ${group.key}`, sql`j.group_key <> ''`, group.serial ? sql`j.serial IS NOT NULL` : sql`j.serial IS NULL`];
}

/**
 * Groups of states of `jobs` that one partial index holds, each with the
 * queue as its first key or in its payload: waiting (`jobs_claim_idx`),
 * running (`jobs_lease_idx`), dead and cancelled (`jobs_finished_idx`),
 * blocked workflow steps (`jobs_blocked_idx`, which a read can use when it
 * names the state as a constant); succeeded rows in `jobs` are the few an
 * upgrade has not moved yet.
 */
const ACTIVE_TABLE_GROUPS: readonly (readonly JobState[])[] = [["queued", "failed"], ["running"], ["blocked"], ["dead", "cancelled"], ["succeeded"]];

/**
 * The newest `limit` jobs by id that match, wherever they are: a page of
 * `jobs` and a page of `finished_jobs`, each read newest first and cut at
 * `limit` on its own, then merged. `jobs` is always read, since it still
 * holds the finished rows an upgrade has not moved yet; `finished_jobs` only
 * when a state asked for can be there, so a read of waiting or running jobs
 * never touches the history. With `order: "asc"`, the oldest `limit` jobs
 * instead (with a lower bound on the id in `where`: the page above it).
 *
 * Each table's page is a subquery with its own `ORDER BY … LIMIT`, so the
 * planner costs it as the whole read it may be: a state that `jobs` has
 * none of (`dead`, now that finished jobs move) is read through its partial
 * index and sorted, instead of a walk of the primary key that reaches the
 * end of the table before it gives up (what happened when the two tables
 * were read as one `UNION ALL` under a single `LIMIT`: see
 * docs/benchmarks.md, Figures behind the code).
 *
 * With a `queue`, each table is read one group of states at a time, so
 * each part is one index range however rare the queue or the state:
 * `finished_jobs` one state at a time through `finished_jobs_queue_idx`
 * (`queue, state, id`: already in id order), `jobs` one partial index at a
 * time (its waiting, running, or dead and cancelled jobs of the queue,
 * sorted). Without a queue, a walk by id that stops at `limit` matches is
 * the cheap read, and each table is one part.
 *
 * With a `group` and a queue, the same parts read the group's range of
 * the indexes that hold it: `jobs_claim_idx` (`queue, group_key, …`) for
 * its waiting jobs, `jobs_group_running_idx` for its running ones, and
 * `finished_jobs_group_idx` (`queue, group_key, state, id`, partial on
 * grouped jobs; migration 25) in the history.
 *
 * @example
 * ```ts
 * const page = newestJobs("stint", { select: sql`j.id, j.state`, states: ["dead"], where: [sql`j.id < ${beforeId}::bigint`], limit: 50 });
 * ```
 */
export function newestJobs<R>(schema: string, parts: NewestJobsParts): RawBuilder<R> {
  const limit = sql`${parts.limit}::integer`;
  const direction = parts.order === "asc" ? sql`ASC` : sql`DESC`;
  const active = jobsTable(schema);
  const page = (table: RawBuilder<unknown>, states: readonly JobState[] | undefined): RawBuilder<unknown> => {
    const conditions = [sql`true`, ...parts.where];
    if (parts.queue !== undefined) conditions.push(sql`j.queue = ${parts.queue}`);
    if (parts.group !== undefined) conditions.push(...groupConditions(parts.group));
    if (states !== undefined) conditions.push(sql`j.state = ANY(${[...states]}::text[])`);
    if (states?.length === 1 && states[0] === "blocked") conditions.push(sql`j.state = 'blocked'`);
    // A queue's group in `jobs` is read from an index range (or, for the few
    // succeeded rows an upgrade left, a scan) and sorted: with an order the
    // primary key gives, the planner walks that instead, through the whole table
    // for a group with no such job, and then also walks `finished_jobs` by id
    // rather than read `finished_jobs_group_idx`.
    const order = parts.group !== undefined && parts.queue !== undefined && table === active ? sql`j.id + 0` : sql`j.id`;
    return sql`(SELECT ${parts.select} FROM ${table} AS j
  WHERE ${sql.join(conditions, sql` AND `)}
  ORDER BY ${order} ${direction} LIMIT ${limit})`;
  };
  const finished = finishedStatesAmong(parts.states);
  const pages: RawBuilder<unknown>[] = [];
  if (parts.queue === undefined) {
    pages.push(page(active, parts.states));
    if (finished.length > 0) pages.push(page(finishedJobsTable(schema), parts.states === undefined ? undefined : finished));
  } else {
    for (const group of ACTIVE_TABLE_GROUPS) {
      const asked = parts.states === undefined ? group : group.filter((state) => parts.states!.includes(state));
      if (asked.length > 0) pages.push(page(active, asked));
    }
    for (const state of finished) pages.push(page(finishedJobsTable(schema), [state]));
  }
  return sql<R>`SELECT * FROM (
${sql.join(pages, sql`\nUNION ALL\n`)}
) AS newest
 ORDER BY newest.id ${direction}
 LIMIT ${limit}`;
}
