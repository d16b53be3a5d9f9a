import type { DeadJob } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { jobsTable } from "./job-row";
import { prepared } from "./prepared";

/** What {@link markJobsDead} takes. */
export interface MarkJobsDeadParams {
  readonly workerId: string;
  readonly jobs: readonly DeadJob[];
}

/**
 * Gives up on many jobs the worker still owns, in one statement: state
 * `dead` with each one's failure, `finished_at = now()`, lease cleared.
 * Fenced on owner and attempt; returns the ids that applied.
 *
 * ### SQL
 * ```sql
 * UPDATE "stint"."jobs" AS jobs
 *    SET state = 'dead', last_error = dead.last_error, error_code = dead.error_code,
 *        finished_at = now(), locked_until = NULL, updated_at = now()
 *   FROM unnest($2::bigint[], $3::integer[], $4::text[], $5::text[]) AS dead(id, attempt, last_error, error_code)
 *  WHERE jobs.id = dead.id AND jobs.attempts = dead.attempt
 *    AND jobs.locked_by = $1 AND jobs.state = 'running'
 * RETURNING jobs.id
 * ```
 *
 * @example
 * ```ts
 * const applied = await markJobsDead(db, "stint", {
 *   workerId,
 *   jobs: [{ id: "812", attempt: 3, failure: { message, code: "STINT_PERMANENT" } }],
 * });
 * ```
 */
export async function markJobsDead(executor: Kysely<any>, schema: string, params: MarkJobsDeadParams): Promise<readonly string[]> {
  const { jobs } = params;
  if (jobs.length === 0) return Object.freeze([]);
  const { rows } = await prepared(sql<{ id: string }>`UPDATE ${jobsTable(schema)} AS jobs
   SET state = 'dead', last_error = dead.last_error, error_code = dead.error_code,
       finished_at = now(), locked_until = NULL, updated_at = now()
  FROM unnest(${jobs.map((job) => job.id)}::bigint[],
              ${jobs.map((job) => job.attempt)}::integer[],
              ${jobs.map((job) => job.failure.message)}::text[],
              ${jobs.map((job) => job.failure.code)}::text[]) AS dead(id, attempt, last_error, error_code)
 WHERE jobs.id = dead.id AND jobs.attempts = dead.attempt
   AND jobs.locked_by = ${params.workerId} AND jobs.state = 'running'
RETURNING jobs.id`).execute(executor);
  return Object.freeze(rows.map((row) => String(row.id)));
}
