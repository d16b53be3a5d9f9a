import type { ListJobsParams } from "@stint/core/driver";
import type { JobRecord } from "@stint/core";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { JOB_COLUMNS, toJobRecord, type JobRow } from "./job-row";
import { groupOf, newestJobs } from "./newest-jobs";

/**
 * A page of jobs, newest first (by id), optionally of one queue and some
 * states, from `jobs` and `finished_jobs` together (see `newestJobs`). Pass
 * the last id of a page as `beforeId` to get the next one (keyset
 * pagination: every page costs the same, however deep).
 *
 * With `group` (or `serialKey`), only the jobs of that group (or serial
 * line); with a queue too, each part reads the group's range of an index
 * (see `newestJobs`).
 *
 * Each table is read newest first from `beforeId` down and stops after
 * `limit` matching rows: `jobs` by its primary key, or the partial index of
 * the states asked for when they are rare (`jobs_claim_idx`,
 * `jobs_lease_idx`, `jobs_finished_idx`); `finished_jobs` by
 * `finished_jobs_id_idx` of each partition, `finished_jobs_dead_idx`
 * for dead and cancelled jobs, or `finished_jobs_queue_idx` for a queue,
 * and not at all when only waiting or running jobs are asked for. It adds no index to the hot table: this is for
 * operators.
 *
 * ### SQL
 * ```sql
 * SELECT * FROM (
 *   (SELECT id, queue, payload, state, … FROM "stint"."jobs" AS j
 *     WHERE true [AND queue = $1] [AND id < $2::bigint] [AND j.state = ANY($3::text[])]
 *       [AND j.group_key = $6 AND j.group_key <> '' AND j.serial IS [NOT] NULL] ORDER BY j.id DESC LIMIT $4)
 *   UNION ALL
 *   (SELECT id, queue, payload, state, … FROM "stint"."finished_jobs" AS j
 *     WHERE true [AND queue = $1] [AND id < $2::bigint] [AND j.state = ANY($5::text[])] ORDER BY j.id DESC LIMIT $4)
 * ) AS newest ORDER BY newest.id DESC LIMIT $4
 * ```
 *
 * @example
 * ```ts
 * const page = await listJobs(db, "stint", { queue: "send-invoice", states: ["dead"], limit: 50 });
 * const next = await listJobs(db, "stint", { queue: "send-invoice", states: ["dead"], limit: 50, beforeId: page.at(-1)?.id });
 * ```
 */
export async function listJobs(executor: Kysely<any>, schema: string, params: ListJobsParams): Promise<readonly JobRecord[]> {
  if (params.states?.length === 0) return Object.freeze([]);
  const where: RawBuilder<unknown>[] = [];
  if (params.beforeId !== undefined) where.push(sql`id < ${params.beforeId}::bigint`);
  const states = params.states === undefined ? {} : { states: params.states };
  const queue = params.queue === undefined ? {} : { queue: params.queue };
  const group = groupOf(params);
  const { rows } = await newestJobs<JobRow>(schema, { select: JOB_COLUMNS, ...states, ...queue, ...group, where, limit: params.limit }).execute(executor);
  return Object.freeze(rows.map(toJobRecord));
}
