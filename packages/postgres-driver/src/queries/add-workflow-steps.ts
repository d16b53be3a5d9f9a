import type { AddWorkflowStepsParams } from "@stint/core/driver";
import { sql } from "kysely";
import { WorkflowDefinitionError } from "@stint/core";
import { MAX_WORKFLOW_STEPS } from "@stint/core/driver";
import type { Statements } from "../connection/statement";
import { heldBy } from "./held-by";
import { jobsTable } from "./job-row";
import { compileStatement } from "./named-statement";
import { insertStepDependencies, insertStepJobs, STEP_IDS, stepRowsCte } from "./workflow-step-rows";

/**
 * Adds steps to the workflow of a running step (`params.parent`), in the
 * transaction that then records the parent's success: only while the
 * worker still owns the parent's attempt (its row is locked for the rest
 * of the transaction), else nothing is written and the answer is
 * `undefined`. Every step waiting for the parent gets the new steps as
 * dependencies too (with its own `ignore_failed`), and its count grows by
 * as many (its row locked in id order first, as `count_down_steps`
 * locks, so the two never deadlock); the workflow's `step_count` grows,
 * within its limit (`MAX_WORKFLOW_STEPS`: more is refused with a
 * `WorkflowDefinitionError`, nothing written).
 *
 * @example
 * ```ts
 * const ids = await addWorkflowSteps(transactionStatements(trx, "transaction"), "stint", { workerId, parent, steps });
 * ```
 */
export async function addWorkflowSteps(statements: Statements, schema: string, params: AddWorkflowStepsParams): Promise<readonly string[] | undefined> {
  const jobs = jobsTable(schema);
  const deps = sql.id(schema, "workflow_deps");
  const workflow = sql`(SELECT parent.workflow_id FROM parent)`;
  // Checked here, before anything is written, so that a step adding too many gets an answer rather than the check constraint's error.
  const fits = sql`(SELECT w.step_count FROM ${sql.id(schema, "workflows")} AS w WHERE w.id = ${workflow}) + ${params.steps.length}::integer <= ${MAX_WORKFLOW_STEPS}::integer`;
  const { rows } = await statements.run<{ readonly fenced: boolean; readonly fits: boolean; readonly ids: string }>(
    compileStatement(sql`WITH parent AS MATERIALIZED (
  SELECT jobs.id, jobs.workflow_id FROM ${jobs} AS jobs
   WHERE jobs.id = ${params.parent.id}::bigint AND jobs.attempts = ${params.parent.attempt}::integer AND jobs.workflow_id IS NOT NULL
     AND ${heldBy(params.workerId)}
   FOR NO KEY UPDATE
),
${stepRowsCte(schema, params.steps, sql`EXISTS (SELECT FROM parent) AND ${fits}`)},
inserted AS (
  ${insertStepJobs(schema, workflow)}
),
dependencies AS (
  ${insertStepDependencies(schema, params.steps, workflow)}
),
waiters AS MATERIALIZED (
  SELECT d.job_id, d.ignore_failed FROM ${deps} AS d WHERE d.needs_id = (SELECT parent.id FROM parent)
),
passed_on AS (
  INSERT INTO ${deps} (job_id, needs_id, workflow_id, ignore_failed)
  SELECT waiters.job_id, steps.id, ${workflow}, waiters.ignore_failed FROM waiters CROSS JOIN steps
),
locked AS MATERIALIZED (
  SELECT jobs.id FROM ${jobs} AS jobs
   WHERE jobs.id = ANY(ARRAY(SELECT waiters.job_id FROM waiters)) AND jobs.state = 'blocked'
   ORDER BY jobs.id
   FOR NO KEY UPDATE
),
waiting_longer AS (
  UPDATE ${jobs} AS jobs SET waiting_on = jobs.waiting_on + (SELECT count(*) FROM steps)::integer, updated_at = now()
   WHERE jobs.id = ANY(ARRAY(SELECT locked.id FROM locked)) AND jobs.state = 'blocked'
),
counted AS (
  UPDATE ${sql.id(schema, "workflows")} AS w SET step_count = w.step_count + (SELECT count(*) FROM steps)::integer
   WHERE w.id = ${workflow}
)
SELECT EXISTS (SELECT FROM parent) AS fenced, coalesce(${fits}, true) AS fits, ${STEP_IDS} AS ids`),
  );
  const row = rows[0];
  if (!row?.fenced) return undefined;
  if (!row.fits) {
    throw new WorkflowDefinitionError(
      params.steps[0]!.step,
      `adding ${params.steps.length} steps would make the workflow hold more than ${MAX_WORKFLOW_STEPS}`,
    );
  }
  return Object.freeze(row.ids === "" ? [] : row.ids.split(","));
}
