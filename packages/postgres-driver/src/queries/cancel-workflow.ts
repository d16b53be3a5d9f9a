import { sql, type Kysely } from "kysely";
import { cancelJob } from "./cancel-job";
import { cancelPicked } from "./cancel-jobs";
import { isJobId, jobsTable } from "./job-row";

/**
 * Cancels workflow `id` in one transaction: marks it cancelled (the first
 * time), cancels its steps still to run (`blocked`, `queued`, `failed`)
 * in one statement, and each running step as `cancelJob` cancels a running
 * job (its owner is told, and its handler's signal aborts). Returns how
 * many steps it cancelled, or `undefined` for an unknown workflow.
 *
 * @example
 * ```ts
 * const cancelled = await cancelWorkflow(db, "stint", { id: "41" });
 * ```
 */
export async function cancelWorkflow(db: Kysely<any>, schema: string, params: { readonly id: string }): Promise<number | undefined> {
  if (!isJobId(params.id)) return undefined;
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql`UPDATE ${sql.id(schema, "workflows")} SET cancelled_at = coalesce(cancelled_at, now())
     WHERE id = ${params.id}::bigint RETURNING id`.execute(trx);
    if (rows.length === 0) return undefined;
    const waiting = await cancelPicked(
      trx,
      schema,
      sql`SELECT id FROM ${jobsTable(schema)} WHERE workflow_id = ${params.id}::bigint AND state IN ('blocked', 'queued', 'failed') ORDER BY id FOR UPDATE`,
      { last_error: sql`'the workflow was cancelled'`, error_code: sql`'STINT_CANCELLED'` },
    );
    const { rows: running } = await sql<{ id: string }>`SELECT id FROM ${jobsTable(schema)}
     WHERE workflow_id = ${params.id}::bigint AND state = 'running' ORDER BY id`.execute(trx);
    let cancelled = waiting;
    for (const { id } of running) if (await cancelJob(trx, schema, { id: String(id) })) cancelled += 1;
    return cancelled;
  });
}
