import type { GroupSummary, ListGroupsParams } from "@stint/core/driver";
import { GROUP_WAITING_COUNT_CAP } from "@stint/core/driver";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { jobsTable } from "./job-row";

interface GroupRow {
  readonly queue: string;
  readonly group_key: string;
  readonly serial: boolean;
  readonly running: number;
  readonly waiting: number | null;
  readonly held_by: string | null;
}

/**
 * The busiest groups and serial lines of each queue, at most `limit` per
 * queue: most running first, then most waiting, then held lines, then by
 * key. Every part is an index range, and the work is bounded:
 *
 * - running jobs per group: an index-only scan of `jobs_group_running_idx`
 *   (`queue, group_key`, partial on running grouped jobs): as many
 *   entries as grouped jobs run;
 * - the groups that wait: the queue's rows of `job_groups` (one per group
 *   or line with waiting jobs, and per held line), by its primary key;
 * - waiting jobs per group: the group's range of `jobs_claim_idx`
 *   (`queue, group_key, …`), counted up to `GROUP_WAITING_COUNT_CAP`.
 *
 * With `runningOnly` (a metrics scrape) only the first part is read, plus
 * each running group's `job_groups` row for its hold: the cost is bounded
 * by the running jobs, however many groups wait.
 *
 * ### SQL
 * ```sql
 * WITH running AS (
 *   SELECT queue, group_key, bool_or(serial IS NOT NULL) AS serial, count(*)::integer AS running
 *     FROM "stint"."jobs" WHERE state = 'running' AND group_key <> '' [AND queue = ANY($1)] GROUP BY queue, group_key),
 * found AS (
 *   SELECT queue, group_key, serial FROM running
 *   UNION SELECT queue, group_key, serial FROM "stint"."job_groups" WHERE group_key <> '' [AND queue = ANY($1)]),  -- not with runningOnly
 * ranked AS (
 *   SELECT f.queue, f.group_key, f.serial, coalesce(r.running, 0) AS running, w.waiting, g.held_by,
 *          row_number() OVER (PARTITION BY f.queue ORDER BY coalesce(r.running, 0) DESC, w.waiting DESC NULLS LAST,
 *                             g.held_by IS NOT NULL DESC, f.group_key COLLATE "C") AS rank
 *     FROM found AS f LEFT JOIN running AS r USING (queue, group_key)
 *     LEFT JOIN "stint"."job_groups" AS g ON g.queue = f.queue AND g.group_key = f.group_key
 *     LEFT JOIN LATERAL (SELECT count(*)::integer AS waiting FROM (SELECT 1 FROM "stint"."jobs" AS j
 *        WHERE j.queue = f.queue AND j.group_key = f.group_key AND j.state IN ('queued', 'failed') LIMIT $2) AS w) AS w ON true)
 * SELECT … FROM ranked WHERE rank <= $3 ORDER BY queue, rank
 * ```
 *
 * @example
 * ```ts
 * const busiest = await listGroups(db, "stint", { queues: ["sync-tenant"], limit: 20 });
 * ```
 */
export async function listGroups(executor: Kysely<any>, schema: string, params: ListGroupsParams): Promise<readonly GroupSummary[]> {
  const { rows } = await listGroupsStatement(schema, params).execute(executor);
  return Object.freeze(
    rows.map((row) =>
      Object.freeze({
        queue: row.queue,
        key: row.group_key,
        serial: row.serial,
        running: Number(row.running),
        waiting: row.waiting === null ? null : Number(row.waiting),
        heldBy: row.held_by === null ? null : String(row.held_by),
      }),
    ),
  );
}

/** The statement {@link listGroups} runs (exported for plan tests). */
export function listGroupsStatement(schema: string, params: ListGroupsParams): RawBuilder<GroupRow> {
  const jobs = jobsTable(schema);
  const groups = sql.id(schema, "job_groups");
  const inQueues = (column: RawBuilder<unknown>): RawBuilder<unknown> =>
    params.queues === undefined ? sql`true` : sql`${column} = ANY(${[...params.queues]}::text[])`;
  const runningOnly = params.runningOnly === true;
  const found = runningOnly
    ? sql`SELECT queue, group_key, serial FROM running`
    : sql`SELECT queue, group_key, serial FROM running
  UNION
  SELECT g.queue, g.group_key, g.serial FROM ${groups} AS g WHERE g.group_key <> '' AND ${inQueues(sql.ref("g.queue"))}`;
  const waiting = runningOnly
    ? sql`(SELECT NULL::integer AS waiting) AS w ON true`
    : sql`LATERAL (SELECT count(*)::integer AS waiting FROM (
      SELECT 1 FROM ${jobs} AS j
       WHERE j.queue = f.queue AND j.group_key = f.group_key AND j.state IN ('queued', 'failed')
       LIMIT ${GROUP_WAITING_COUNT_CAP}::integer) AS capped) AS w ON true`;
  return sql<GroupRow>`WITH running AS (
  SELECT j.queue, j.group_key, bool_or(j.serial IS NOT NULL) AS serial, count(*)::integer AS running
    FROM ${jobs} AS j
   WHERE j.state = 'running' AND j.group_key <> '' AND ${inQueues(sql.ref("j.queue"))}
   GROUP BY j.queue, j.group_key),
found AS (
  ${found}),
ranked AS (
  SELECT f.queue, f.group_key, f.serial, coalesce(r.running, 0) AS running, w.waiting, g.held_by,
         row_number() OVER (PARTITION BY f.queue
                            ORDER BY coalesce(r.running, 0) DESC, w.waiting DESC NULLS LAST, g.held_by IS NOT NULL DESC, f.group_key COLLATE "C") AS rank
    FROM found AS f
    LEFT JOIN running AS r ON r.queue = f.queue AND r.group_key = f.group_key
    LEFT JOIN ${groups} AS g ON g.queue = f.queue AND g.group_key = f.group_key
    LEFT JOIN ${waiting})
SELECT queue, group_key, serial, running, waiting, held_by FROM ranked
 WHERE rank <= ${params.limit}::integer
 ORDER BY queue COLLATE "C", rank`;
}
