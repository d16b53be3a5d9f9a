import type { FinishDeadHooksParams } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { deadHooksTable } from "./dead-hooks-table";

/**
 * Records the `onDead` hooks of many deaths as done, in one statement: it
 * deletes their `dead_hooks` rows, fenced on the claim (`locked_by`), so a
 * worker whose claim lapsed and was taken over deletes nothing. Returns the
 * job ids that applied.
 *
 * ### SQL
 * ```sql
 * DELETE FROM "stint"."dead_hooks" AS hooks
 *  USING unnest($2::bigint[], $3::integer[]) AS done(job_id, attempt)
 *  WHERE hooks.job_id = done.job_id AND hooks.attempt = done.attempt AND hooks.locked_by = $1
 * RETURNING hooks.job_id
 * ```
 *
 * @example
 * ```ts
 * const done = await finishDeadHooks(db, "stint", { workerId, hooks: [{ id: "812", attempt: 3 }] });
 * ```
 */
export async function finishDeadHooks(executor: Kysely<any>, schema: string, params: FinishDeadHooksParams): Promise<readonly string[]> {
  const { hooks } = params;
  if (hooks.length === 0) return Object.freeze([]);
  const { rows } = await sql<{ job_id: string }>`DELETE FROM ${deadHooksTable(schema)} AS hooks
 USING unnest(${hooks.map((hook) => hook.id)}::bigint[], ${hooks.map((hook) => hook.attempt)}::integer[]) AS done(job_id, attempt)
 WHERE hooks.job_id = done.job_id AND hooks.attempt = done.attempt AND hooks.locked_by = ${params.workerId}
RETURNING hooks.job_id`.execute(executor);
  return Object.freeze(rows.map((row) => String(row.job_id)));
}
