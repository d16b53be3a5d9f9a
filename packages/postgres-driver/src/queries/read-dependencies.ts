import type { DependencyRecord, JobState } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { isJobId, jobsTable } from "./job-row";
import { finishedJobsTable } from "./finished-jobs";

interface DependencyRow {
  readonly id: string;
  readonly step: string;
  readonly queue: string;
  readonly state: JobState;
  readonly payload: unknown;
  readonly result: unknown;
  readonly last_error: string | null;
}

/**
 * The steps job `jobId` waits for, with their states and results, in one
 * statement: its dependencies by `workflow_deps_job_idx`, each found in
 * `jobs` or, through the workflow's partial index, in `finished_jobs`
 * (one range per partition rather than one lookup per step and partition,
 * which a fan-in of thousands would pay).
 *
 * @example
 * ```ts
 * const summaries = (await readDependencies(db, "stint", { jobId: "812" })).filter((d) => d.step === "summarise");
 * ```
 */
export async function readDependencies(db: Kysely<any>, schema: string, params: { readonly jobId: string }): Promise<readonly DependencyRecord[]> {
  if (!isJobId(params.jobId)) return Object.freeze([]);
  const columns = sql`j.id, j.step, j.queue, j.state, j.payload, j.result, j.last_error`;
  const { rows } = await sql<DependencyRow>`WITH needs AS MATERIALIZED (
  SELECT d.needs_id AS id, d.workflow_id FROM ${sql.id(schema, "workflow_deps")} AS d WHERE d.job_id = ${params.jobId}::bigint
)
SELECT ${columns} FROM ${jobsTable(schema)} AS j WHERE j.id = ANY(ARRAY(SELECT needs.id FROM needs))
UNION ALL
SELECT ${columns} FROM ${finishedJobsTable(schema)} AS j
 WHERE j.workflow_id = (SELECT needs.workflow_id FROM needs LIMIT 1) AND j.id IN (SELECT needs.id FROM needs)
ORDER BY id`.execute(db);
  return Object.freeze(
    rows.map((row) =>
      Object.freeze({
        jobId: String(row.id),
        step: row.step,
        queue: row.queue,
        state: row.state,
        payload: row.payload,
        result: row.state === "succeeded" ? (row.result ?? null) : null,
        lastError: row.last_error,
      }),
    ),
  );
}
