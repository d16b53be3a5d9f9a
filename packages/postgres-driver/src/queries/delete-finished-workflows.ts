import { sql, type Kysely } from "kysely";
import { finishedJobsTable } from "./finished-jobs";
import { jobsTable, millisecondsInterval } from "./job-row";

/** Most workflows one call removes. */
const WORKFLOWS_PER_CALL = 1_000;

/**
 * Removes up to 1,000 workflows created more than `olderThanMs` ago none
 * of whose steps is left in `jobs` or `finished_jobs` (retention deleted
 * them all, queue by queue), with their dependencies; returns how many.
 * Retention runs it after deleting finished jobs, so a workflow goes with
 * its last step. The steps of a workflow are looked up by the partial
 * indexes on `workflow_id`.
 *
 * @example
 * ```ts
 * await deleteFinishedWorkflows(db, "stint", 7 * 86_400_000);
 * ```
 */
export async function deleteFinishedWorkflows(db: Kysely<any>, schema: string, olderThanMs: number): Promise<number> {
  const { rows } = await sql<{ deleted: string }>`WITH gone AS MATERIALIZED (
  SELECT w.id FROM ${sql.id(schema, "workflows")} AS w
   WHERE w.created_at < now() - ${millisecondsInterval(olderThanMs)}
     AND NOT EXISTS (SELECT FROM ${jobsTable(schema)} AS j WHERE j.workflow_id = w.id)
     AND NOT EXISTS (SELECT FROM ${finishedJobsTable(schema)} AS f WHERE f.workflow_id = w.id)
   ORDER BY w.id
   LIMIT ${WORKFLOWS_PER_CALL}
   FOR UPDATE SKIP LOCKED
),
dependencies AS (
  DELETE FROM ${sql.id(schema, "workflow_deps")} AS d WHERE d.workflow_id = ANY(ARRAY(SELECT gone.id FROM gone))
),
workflows AS (
  DELETE FROM ${sql.id(schema, "workflows")} AS w WHERE w.id = ANY(ARRAY(SELECT gone.id FROM gone)) RETURNING 1
)
SELECT count(*) AS deleted FROM workflows`.execute(db);
  return Number(rows[0]?.deleted ?? 0);
}
