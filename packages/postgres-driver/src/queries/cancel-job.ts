import { sql, type Kysely } from "kysely";
import { isJobId, jobsTable } from "./job-row";

/**
 * Cancels a job that has not finished (`queued`, `failed` or `running`):
 * state `cancelled`, `finished_at = now()`, lease cleared. A running attempt
 * carries on in its worker, but its outcome is refused by the fence. Returns
 * false when the job does not exist or has already finished.
 *
 * ### SQL
 * ```sql
 * UPDATE "stint"."jobs"
 *    SET state = 'cancelled', finished_at = now(), locked_until = NULL, updated_at = now()
 *  WHERE id = $1 AND state IN ('queued', 'failed', 'running')
 * RETURNING id
 * ```
 *
 * @example
 * ```ts
 * if (!(await cancelJob(db, "stint", { id: "812" }))) console.log("job 812 had already finished");
 * ```
 */
export async function cancelJob(executor: Kysely<any>, schema: string, params: { readonly id: string }): Promise<boolean> {
  if (!isJobId(params.id)) return false;
  const { rows } = await sql<{ id: string }>`UPDATE ${jobsTable(schema)}
   SET state = 'cancelled', finished_at = now(), locked_until = NULL, updated_at = now()
 WHERE id = ${params.id}::bigint AND state IN ('queued', 'failed', 'running')
RETURNING id`.execute(executor);
  return rows.length > 0;
}
