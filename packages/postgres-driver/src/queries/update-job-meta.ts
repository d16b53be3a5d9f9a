import { mergeMetaPatch, type MetaUpdate } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { jobsTable } from "./job-row";

/**
 * Merges a running attempt's `ctx.updateMeta` patch into its job's
 * `meta`, fenced like an outcome (id, attempt, owner, state `running`);
 * true when it applied. The merge and its size check (`mergeMetaPatch`,
 * the same as the in-memory store's) run here between a locking read and
 * the update, in one transaction, so the cap is measured on the JSON text
 * enqueue measures. `meta` is in no index, so the update is usually HOT.
 *
 * ### SQL
 * ```sql
 * BEGIN;
 * SELECT meta FROM "stint"."jobs"
 *  WHERE id = $1 AND attempts = $2 AND locked_by = $3 AND state = 'running' FOR NO KEY UPDATE;
 * UPDATE "stint"."jobs" SET meta = $2::jsonb, updated_at = now() WHERE id = $1;
 * COMMIT;
 * ```
 *
 * @example
 * ```ts
 * await updateJobMeta(db, "stint", { workerId, job: { id: "812", attempt: 2 }, patchJson: '{"step":"uploaded"}' });
 * ```
 */
export async function updateJobMeta(db: Kysely<any>, schema: string, params: MetaUpdate): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ meta: unknown }>`SELECT meta FROM ${jobsTable(schema)}
 WHERE id = ${params.job.id}::bigint AND attempts = ${params.job.attempt}::integer
   AND locked_by = ${params.workerId} AND state = 'running'
   FOR NO KEY UPDATE`.execute(trx);
    const row = rows[0];
    if (row === undefined) return false;
    const merged = mergeMetaPatch(row.meta === null ? null : JSON.stringify(row.meta), params.patchJson);
    await sql`UPDATE ${jobsTable(schema)} SET meta = ${merged}::jsonb, updated_at = now() WHERE id = ${params.job.id}::bigint`.execute(trx);
    return true;
  });
}
