import type { JobIdParams } from "@stint/core/driver";
import type { JobRecord } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { allJobsView } from "./finished-jobs";
import { isJobId, JOB_COLUMNS, toJobRecord, type JobRow } from "./job-row";

/**
 * One job by id, or `undefined` (also for an id that cannot exist, such as
 * `"abc"`), wherever it is: in `jobs` while it is active (or finished before
 * an upgrade moved it), in `finished_jobs` once it finished.
 *
 * It reads `all_jobs`, which PostgreSQL plans as a probe of the primary key
 * of `jobs` and then one of `finished_jobs_id_idx` per partition. A job is
 * in one table at a time (it moves in one statement, and the read sees
 * both tables as of one snapshot), so the first row is the job: an active
 * job, the one a `waitFor` polls for, never costs a probe of the history.
 *
 * ### SQL
 * ```sql
 * SELECT * FROM "stint"."all_jobs" WHERE id = $1 LIMIT 1
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
  FROM ${allJobsView(schema)}
 WHERE id = ${params.id}::bigint
 LIMIT 1`.execute(executor);
  const row = rows[0];
  return row === undefined ? undefined : toJobRecord(row);
}
