import type { CompletedJob } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { jobsTable } from "./job-row";

/** What {@link completeJobs} takes. */
export interface CompleteJobsParams {
  readonly workerId: string;
  readonly jobs: readonly CompletedJob[];
}

const MAX_DURATION_MS = 2_147_483_647;

/**
 * Marks many attempts `succeeded` in one statement, with their results and
 * durations; returns the ids that applied. An attempt the worker no longer
 * owns (another worker reclaimed the job, or it was rescued or cancelled) is
 * not written. `locked_by` is kept as the last owner; the lease is cleared.
 *
 * ### SQL
 * ```sql
 * UPDATE "stint"."jobs" AS jobs
 *    SET state = 'succeeded', result = done.result::jsonb, duration_ms = done.duration_ms,
 *        finished_at = now(), locked_until = NULL, updated_at = now()
 *   FROM unnest($2::bigint[], $3::integer[], $4::text[], $5::integer[]) AS done(id, attempt, result, duration_ms)
 *  WHERE jobs.id = done.id AND jobs.attempts = done.attempt
 *    AND jobs.locked_by = $1 AND jobs.state = 'running'
 * RETURNING jobs.id
 * ```
 *
 * @example
 * ```ts
 * const applied = await completeJobs(db, "stint", {
 *   workerId,
 *   jobs: [{ id: "812", attempt: 1, resultJson: '{"sent":true}', durationMs: 41 }],
 * });
 * ```
 */
export async function completeJobs(executor: Kysely<any>, schema: string, params: CompleteJobsParams): Promise<readonly string[]> {
  if (params.jobs.length === 0) return Object.freeze([]);
  const { jobs } = params;
  const { rows } = await sql<{ id: string }>`UPDATE ${jobsTable(schema)} AS jobs
   SET state = 'succeeded', result = done.result::jsonb, duration_ms = done.duration_ms,
       finished_at = now(), locked_until = NULL, updated_at = now()
  FROM unnest(${jobs.map((job) => job.id)}::bigint[],
              ${jobs.map((job) => job.attempt)}::integer[],
              ${jobs.map((job) => job.resultJson)}::text[],
              ${jobs.map((job) => clampDuration(job.durationMs))}::integer[]) AS done(id, attempt, result, duration_ms)
 WHERE jobs.id = done.id AND jobs.attempts = done.attempt
   AND jobs.locked_by = ${params.workerId} AND jobs.state = 'running'
RETURNING jobs.id`.execute(executor);
  return Object.freeze(rows.map((row) => String(row.id)));
}

function clampDuration(durationMs: number): number {
  return Math.min(Math.max(Math.round(durationMs), 0), MAX_DURATION_MS);
}
