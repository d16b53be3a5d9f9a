import { sql, type RawBuilder } from "kysely";
import { wakeupChannel } from "../wakeup-channel";

/**
 * `settled AS (…)`, a CTE for a statement whose CTE `done` holds the jobs
 * it just recorded as succeeded: every dependency on one of them that is
 * a workflow step, not yet settled, is settled, returning the waiting
 * step's id once per dependency. Jobs that are not steps are filtered out
 * before the index is read (`ARRAY(…)` of none finds nothing without a
 * scan), so a statement without steps pays one pass over its own rows.
 *
 * @example
 * ```ts
 * sql`WITH done AS (DELETE … RETURNING jobs.*), ${settleSucceededSteps(schema)} SELECT ${countDownSettled(schema)} FROM done`;
 * ```
 */
export function settleSucceededSteps(schema: string): RawBuilder<unknown> {
  return sql`settled AS (
  UPDATE ${sql.id(schema, "workflow_deps")} AS d SET settled = true
   WHERE d.needs_id = ANY(ARRAY(SELECT done.id FROM done WHERE done.workflow_id IS NOT NULL)) AND NOT d.settled
  RETURNING d.job_id
)`;
}

/**
 * The count-down of the steps {@link settleSucceededSteps} settled, as an
 * output column: `count_down_steps` runs once, and only when a dependency
 * was settled (the steps that became due, or `NULL`).
 */
export function countDownSettled(schema: string): RawBuilder<number | null> {
  return sql<
    number | null
  >`(SELECT ${sql.id(schema, "count_down_steps")}(array_agg(settled.job_id), ${sql.lit(wakeupChannel(schema))}) FROM settled HAVING count(*) > 0)`;
}
