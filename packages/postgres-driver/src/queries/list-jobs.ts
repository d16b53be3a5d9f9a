import type { ListJobsParams } from "@stint/core/driver";
import type { JobRecord } from "@stint/core";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { JOB_COLUMNS, jobsTable, toJobRecord, type JobRow } from "./job-row";

/**
 * A page of jobs, newest first (by id), optionally of one queue and some
 * states. Pass the last id of a page as `beforeId` to get the next one
 * (keyset pagination: every page costs the same, however deep).
 *
 * The plan walks the primary key backwards from `beforeId` and stops after
 * `limit` matching rows; PostgreSQL may prefer `jobs_claim_idx`,
 * `jobs_lease_idx` or `jobs_finished_idx` when the states asked for are
 * rare. It adds no index to the hot table: this is for operators.
 *
 * ### SQL
 * ```sql
 * SELECT id, queue, payload, state, … FROM "stint"."jobs"
 *  WHERE true [AND queue = $1] [AND state = ANY($2::text[])] [AND id < $3::bigint]
 *  ORDER BY id DESC
 *  LIMIT $4
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
  const conditions: RawBuilder<unknown>[] = [sql`true`];
  if (params.queue !== undefined) conditions.push(sql`queue = ${params.queue}`);
  if (params.states !== undefined) conditions.push(sql`state = ANY(${[...params.states]}::text[])`);
  if (params.beforeId !== undefined) conditions.push(sql`id < ${params.beforeId}::bigint`);
  const { rows } = await sql<JobRow>`SELECT ${JOB_COLUMNS}
  FROM ${jobsTable(schema)}
 WHERE ${sql.join(conditions, sql` AND `)}
 ORDER BY id DESC
 LIMIT ${params.limit}::integer`.execute(executor);
  return Object.freeze(rows.map(toJobRecord));
}
