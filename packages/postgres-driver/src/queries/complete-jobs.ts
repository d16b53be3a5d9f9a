import type { CompletedJob } from "@stint/core";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { jobsTable } from "./job-row";
import { prepared } from "./prepared";

/** What {@link completeJobs} takes. */
export interface CompleteJobsParams {
  readonly workerId: string;
  readonly jobs: readonly CompletedJob[];
}

/**
 * One attempt to mark succeeded by {@link completeJobsStatement}: a
 * `durationMs` of `null` means "measure it on the database clock", from the
 * attempt's `started_at` to the start of the completing statement.
 */
export interface CompletionRow {
  readonly id: string;
  readonly attempt: number;
  readonly resultJson: string | null;
  readonly durationMs: number | null;
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
 *    SET state = 'succeeded', result = done.result::jsonb,
 *        duration_ms = coalesce(done.duration_ms, <statement_timestamp() - started_at in ms>),
 *        finished_at = statement_timestamp(), locked_until = NULL, updated_at = statement_timestamp()
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
  const { rows } = await completeJobsStatement(schema, params.workerId, params.jobs).execute(executor);
  return Object.freeze(rows.map((row) => String(row.id)));
}

/**
 * The fenced completion itself, shared by {@link completeJobs} (its own
 * statement) and `completeInTransaction` (the last statement of the job's
 * transaction). `statement_timestamp()` rather than `now()`: inside a
 * longer transaction `now()` is when the transaction began, not when the
 * job finished; in a statement of its own the two are the same.
 */
export function completeJobsStatement(schema: string, workerId: string, jobs: readonly CompletionRow[]): RawBuilder<{ id: string }> {
  return prepared(sql<{ id: string }>`UPDATE ${jobsTable(schema)} AS jobs
   SET state = 'succeeded', result = done.result::jsonb,
       duration_ms = coalesce(done.duration_ms,
         least(greatest(round(extract(epoch FROM statement_timestamp() - jobs.started_at) * 1000), 0), ${MAX_DURATION_MS})::integer),
       finished_at = statement_timestamp(), locked_until = NULL, updated_at = statement_timestamp()
  FROM unnest(${jobs.map((job) => job.id)}::bigint[],
              ${jobs.map((job) => job.attempt)}::integer[],
              ${jobs.map((job) => job.resultJson)}::text[],
              ${jobs.map((job) => (job.durationMs === null ? null : clampDuration(job.durationMs)))}::integer[]) AS done(id, attempt, result, duration_ms)
 WHERE jobs.id = done.id AND jobs.attempts = done.attempt
   AND jobs.locked_by = ${workerId} AND jobs.state = 'running'
RETURNING jobs.id`);
}

function clampDuration(durationMs: number): number {
  return Math.min(Math.max(Math.round(durationMs), 0), MAX_DURATION_MS);
}
