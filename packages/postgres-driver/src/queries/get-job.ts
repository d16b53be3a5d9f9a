import type { JobIdParams } from "@stint/core/driver";
import type { JobRecord } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { isJobId, JOB_COLUMNS, jobsTable, toJobRecord, type JobRow } from "./job-row";

/**
 * One job by id, or `undefined` (also for an id that cannot exist, such as `"abc"`).
 *
 * ### SQL
 * ```sql
 * SELECT * FROM "stint"."jobs" WHERE id = $1
 * ```
 *
 * @example
 * ```ts
 * const job = await getJob(db, "stint", { id: "812" });
 * console.log(job?.state, job?.attempts);
 * ```
 */
export async function getJob(executor: Kysely<any>, schema: string, params: JobIdParams): Promise<JobRecord | undefined> {
  if (!isJobId(params.id)) return undefined;
  const { rows } = await sql<JobRow>`SELECT ${JOB_COLUMNS}
  FROM ${jobsTable(schema)}
 WHERE id = ${params.id}::bigint`.execute(executor);
  const row = rows[0];
  return row === undefined ? undefined : toJobRecord(row);
}
