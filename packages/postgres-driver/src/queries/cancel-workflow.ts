import { sql, type Kysely } from "kysely";
import { cancelJob } from "./cancel-job";
import { cancelPicked } from "./cancel-jobs";
import { isJobId, jobsTable } from "./job-row";
import { finishedJobsTable } from "./finished-jobs";

/** Most passes of {@link cancelWorkflow} over the workflow's steps (each takes what a claim or a success moved meanwhile). */
const MAX_PASSES = 10;

/**
 * Cancels workflow `id` in one transaction: marks it cancelled (the first
 * time; a workflow whose steps have all finished is left as it is), then cancels its running steps as `cancelJob` cancels a running
 * job (its owner is told, and its handler's signal aborts) and its steps
 * still to run (`blocked`, `queued`, `failed`) in one statement; again,
 * until a pass finds nothing, for a step a worker claimed meanwhile.
 * Returns how many steps it cancelled, or `undefined` for an unknown
 * workflow.
 *
 * Running steps are locked first, then the others, each in id order: the
 * statement that records a step's success locks that step and then the
 * steps after it, in the same order, so the two never deadlock; and when
 * the cancel waited for such a statement, the steps it unblocked are found
 * in their new state (`count_down_steps` updates them in place).
 *
 * @example
 * ```ts
 * const cancelled = await cancelWorkflow(db, "stint", { id: "41" });
 * ```
 */
export async function cancelWorkflow(db: Kysely<any>, schema: string, params: { readonly id: string }): Promise<number | undefined> {
  if (!isJobId(params.id)) return undefined;
  const jobs = jobsTable(schema);
  return db.transaction().execute(async (trx) => {
    // A workflow whose steps have all finished keeps the state they gave it: cancelling it changes nothing.
    const { rows } = await sql<{ unfinished: boolean }>`UPDATE ${sql.id(schema, "workflows")} AS w
       SET cancelled_at = CASE WHEN unfinished THEN coalesce(w.cancelled_at, now()) ELSE w.cancelled_at END
      FROM (SELECT EXISTS (SELECT 1 FROM ${jobs} WHERE workflow_id = ${params.id}::bigint) AS unfinished) AS steps
     WHERE w.id = ${params.id}::bigint RETURNING steps.unfinished`.execute(trx);
    if (rows.length === 0) return undefined;
    if (!rows[0]!.unfinished) return 0;
    for (let pass = 0; pass < MAX_PASSES; pass += 1) {
      const { rows: running } = await sql<{ id: string }>`SELECT id FROM ${jobs}
       WHERE workflow_id = ${params.id}::bigint AND state = 'running' ORDER BY id FOR UPDATE`.execute(trx);
      let now = 0;
      for (const { id } of running) if (await cancelJob(trx, schema, { id: String(id) })) now += 1;
      now += await cancelPicked(
        trx,
        schema,
        sql`SELECT id FROM ${jobs} WHERE workflow_id = ${params.id}::bigint AND state IN ('blocked', 'queued', 'failed') ORDER BY id FOR UPDATE`,
        { last_error: sql`'the workflow was cancelled'`, error_code: sql`'STINT_CANCELLED'` },
      );
      if (now === 0) break;
    }
    // Every cancel of this transaction, the triggers' of the steps after a cancelled one included, finished at now().
    const { rows: counted } = await sql<{ n: number }>`SELECT count(*)::integer AS n FROM ${finishedJobsTable(schema)}
     WHERE workflow_id = ${params.id}::bigint AND state = 'cancelled' AND finished_at = now()`.execute(trx);
    return counted[0]?.n ?? 0;
  });
}
