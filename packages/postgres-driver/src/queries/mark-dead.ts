import type { FenceResult, JobAttempt, JobFailure } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { jobsTable } from "./job-row";
import { prepared } from "./prepared";

/** What {@link markDead} takes. */
export interface MarkDeadParams {
  readonly workerId: string;
  readonly job: JobAttempt;
  readonly failure: JobFailure;
}

/**
 * Gives up on a job the worker still owns: state `dead` with the failure,
 * `finished_at = now()`, lease cleared. Fenced on owner and attempt.
 *
 * ### SQL
 * ```sql
 * UPDATE "stint"."jobs"
 *    SET state = 'dead', last_error = $1, error_code = $2, finished_at = now(),
 *        locked_until = NULL, updated_at = now()
 *  WHERE id = $3 AND locked_by = $4 AND attempts = $5 AND state = 'running'
 * RETURNING id
 * ```
 *
 * @example
 * ```ts
 * await markDead(db, "stint", { workerId, job: { id: "812", attempt: 3 }, failure: { message, code: "STINT_PERMANENT" } });
 * ```
 */
export async function markDead(executor: Kysely<any>, schema: string, params: MarkDeadParams): Promise<FenceResult> {
  const { rows } = await prepared(sql<{ id: string }>`UPDATE ${jobsTable(schema)}
   SET state = 'dead', last_error = ${params.failure.message}::text, error_code = ${params.failure.code}::text,
       finished_at = now(), locked_until = NULL, updated_at = now()
 WHERE id = ${params.job.id}::bigint AND locked_by = ${params.workerId}
   AND attempts = ${params.job.attempt}::integer AND state = 'running'
RETURNING id`).execute(executor);
  return Object.freeze({ applied: rows.length > 0 });
}
