import type { ReadStepResultsParams, StepResult } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { isJobId, jobsTable } from "./job-row";
import { finishedJobsTable } from "./finished-jobs";

interface ResultRow {
  readonly id: string;
  readonly result: unknown;
}

/**
 * The results of the steps `jobIds` of workflow `workflowId` that
 * succeeded, in one statement, however many ids (a workflow holds at most
 * `MAX_WORKFLOW_STEPS`): the ids go as an array parameter (the same one
 * to each half). A step is found in `jobs` by its primary key (one that
 * finished before an upgrade moved it) or in `finished_jobs`, where the
 * workflow id gives PostgreSQL the choice of reading each partition's
 * range of the workflow (`finished_jobs_workflow_idx`) instead of looking
 * every id up in every partition. A job is in one table at a time and
 * the statement reads both as of one snapshot, so no step comes twice.
 *
 * ### SQL
 * ```sql
 * SELECT j.id, j.result FROM "stint"."jobs" AS j
 *  WHERE j.id = ANY($1::bigint[]) AND j.workflow_id = $2::bigint AND j.state = 'succeeded'
 * UNION ALL
 * SELECT j.id, j.result FROM "stint"."finished_jobs" AS j
 *  WHERE j.workflow_id = $3::bigint AND j.id = ANY($4::bigint[]) AND j.state = 'succeeded'
 * ORDER BY id
 * ```
 *
 * @example
 * ```ts
 * const rows = await readStepResults(db, "stint", { workflowId: "41", jobIds: ["812", "813"] });
 * ```
 */
export async function readStepResults(db: Kysely<any>, schema: string, params: ReadStepResultsParams): Promise<readonly StepResult[]> {
  const jobIds = params.jobIds.filter(isJobId);
  if (!isJobId(params.workflowId) || jobIds.length === 0) return Object.freeze([]);
  const ids = sql`${jobIds}::bigint[]`;
  const workflowId = sql`${params.workflowId}::bigint`;
  const { rows } = await sql<ResultRow>`SELECT j.id, j.result FROM ${jobsTable(schema)} AS j
 WHERE j.id = ANY(${ids}) AND j.workflow_id = ${workflowId} AND j.state = 'succeeded'
UNION ALL
SELECT j.id, j.result FROM ${finishedJobsTable(schema)} AS j
 WHERE j.workflow_id = ${workflowId} AND j.id = ANY(${ids}) AND j.state = 'succeeded'
ORDER BY id`.execute(db);
  return Object.freeze(rows.map((row) => Object.freeze({ jobId: String(row.id), result: row.result ?? null })));
}
