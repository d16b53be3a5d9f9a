import type { EnqueuedWorkflowIds, NewWorkflow } from "@stint/core/driver";
import { InfrastructureError } from "@stint/core";
import { sql } from "kysely";
import type { Statements } from "../connection/statement";
import { compileStatement } from "./named-statement";
import { insertStepDependencies, insertStepJobs, STEP_IDS, stepRowsCte } from "./workflow-step-rows";

/**
 * Inserts a workflow, its steps (each a job, `blocked` while it waits for
 * any) and their dependencies in one statement, so that they commit
 * together, in the caller's transaction when `statements` runs in one.
 * Job ids are drawn in input order and returned in it.
 *
 * @example
 * ```ts
 * const { id, jobIds } = await enqueueWorkflow(statements, "stint", { name: "digest", steps });
 * ```
 */
export async function enqueueWorkflow(statements: Statements, schema: string, workflow: NewWorkflow): Promise<EnqueuedWorkflowIds> {
  const id = sql.ref("workflow.id");
  const { rows } = await statements.run<{ readonly id: string; readonly ids: string }>(
    compileStatement(sql`WITH workflow AS (
  INSERT INTO ${sql.id(schema, "workflows")} (name, step_count) VALUES (${workflow.name}, ${workflow.steps.length}::integer) RETURNING id
),
${stepRowsCte(schema, workflow.steps)},
inserted AS (
  ${insertStepJobs(schema, sql`(SELECT ${id} FROM workflow)`)}
),
dependencies AS (
  ${insertStepDependencies(schema, workflow.steps, sql`(SELECT ${id} FROM workflow)`)}
)
SELECT workflow.id, ${STEP_IDS} AS ids FROM workflow`),
  );
  const row = rows[0];
  const jobIds = row === undefined || row.ids === "" ? [] : row.ids.split(",");
  if (row === undefined || jobIds.length !== workflow.steps.length)
    throw new InfrastructureError(`enqueueWorkflow inserted ${jobIds.length} of ${workflow.steps.length} steps`);
  return Object.freeze({ id: String(row.id), jobIds: Object.freeze(jobIds) });
}
