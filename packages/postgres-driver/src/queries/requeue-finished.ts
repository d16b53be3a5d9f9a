import type { JobRequeueReason } from "@stint/core";
import { sql, type RawBuilder } from "kysely";
import { insertJobRows, type JobValues } from "./finished-jobs";
import { jobsTable } from "./job-row";
import type { JobEventColumns } from "./notify-job-events";

/**
 * What a retried job's row gets, in place (`UPDATE jobs AS <row> SET …`) or
 * on its way back from `finished_jobs` (see {@link requeueFinished}):
 * `queued`, due now, with a fresh attempt budget (`max_attempts = attempts
 * + max_attempts`) and its lease, `finished_at` and start-by deadline
 * cleared (an operator's retry of an expired job means "run it"). `row` names the
 * row the values are computed from; every other column is kept.
 *
 * @example
 * ```ts
 * insertJobRows(jobsTable(schema), "removed", requeuedValues(sql.id("removed")));
 * ```
 */
export function requeuedValues(row: RawBuilder<unknown>): JobValues {
  return {
    state: sql`'queued'`,
    run_at: sql`now()`,
    max_attempts: sql`${row}.attempts + ${row}.max_attempts`,
    locked_by: sql`NULL`,
    locked_until: sql`NULL`,
    finished_at: sql`NULL`,
    start_by: sql`NULL`,
    updated_at: sql`now()`,
  };
}

/**
 * {@link requeuedValues} as the `SET` list of an `UPDATE` of `row`.
 *
 * @example
 * ```ts
 * sql`UPDATE ${jobsTable(schema)} AS jobs SET ${requeuedSet(sql.id("jobs"))} WHERE …`;
 * ```
 */
export function requeuedSet(row: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql.join(Object.entries(requeuedValues(row)).map(([column, value]) => sql`${sql.id(column)} = ${value}`));
}

/**
 * `INSERT INTO jobs (…) SELECT … FROM <source>`: the second half of a
 * statement that retries jobs kept in `finished_jobs`. `source` names a CTE
 * of the same statement that deleted them there (`DELETE FROM finished_jobs
 * … RETURNING *`); each row comes back to `jobs` under its own id with
 * {@link requeuedValues}, as a retry in place sets them. The delete and the
 * insert commit together, or neither does.
 *
 * @example
 * ```ts
 * sql`WITH removed AS (DELETE FROM ${finishedJobsTable(schema)} WHERE id = ${id}::bigint RETURNING *),
 * returned AS (${requeueFinished(schema, "removed")} RETURNING id)
 * SELECT id FROM returned`;
 * ```
 */
export function requeueFinished(schema: string, source: string): RawBuilder<unknown> {
  return insertJobRows(jobsTable(schema), source, requeuedValues(sql.id(source)));
}

/**
 * The job-event columns of a `requeued` event (see `notifyJobEvents`) with
 * `reason` as its detail, over rows that carry `id`, `queue` and
 * `attempts`: what a retry, a run-now, a snooze or a release tells
 * job-event listeners.
 *
 * @example
 * ```ts
 * joinNotifying(schema, sql`retried`, requeuedEvent("retry"));
 * ```
 */
export function requeuedEvent(reason: JobRequeueReason): JobEventColumns {
  return { kind: sql`'requeued'`, attempt: sql.ref("attempts"), detail: sql`to_jsonb(${sql.lit(reason)}::text)` };
}
