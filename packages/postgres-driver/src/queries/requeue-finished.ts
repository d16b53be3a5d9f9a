import { sql, type RawBuilder } from "kysely";
import { JOB_COLUMN_NAMES, type JobColumn } from "./finished-jobs";
import { jobsTable } from "./job-row";

/** What a retried job's row gets instead of its finished values; every other column is kept. */
const REQUEUED: Partial<Record<JobColumn, RawBuilder<unknown>>> = {
  state: sql`'queued'`,
  run_at: sql`now()`,
  locked_by: sql`NULL`,
  locked_until: sql`NULL`,
  finished_at: sql`NULL`,
  updated_at: sql`now()`,
};

/**
 * `INSERT INTO jobs (…) SELECT … FROM <source>`: the second half of a
 * statement that retries jobs kept in `finished_jobs`. `source` names a CTE
 * of the same statement that deleted them there (`DELETE FROM finished_jobs
 * … RETURNING *`); each row comes back to `jobs` under its own id as
 * `queued`, due now, with a fresh attempt budget (`max_attempts = attempts
 * + max_attempts`) and its lease and `finished_at` cleared, as a retry in
 * place sets them. The delete and the insert commit together, or neither
 * does.
 *
 * @example
 * ```ts
 * sql`WITH removed AS (DELETE FROM ${finishedJobsTable(schema)} WHERE id = ${id}::bigint RETURNING *),
 * returned AS (${requeueFinished(schema, "removed")} RETURNING id)
 * SELECT id FROM returned`;
 * ```
 */
export function requeueFinished(schema: string, source: string): RawBuilder<unknown> {
  const from = sql.id(source);
  const values: Partial<Record<JobColumn, RawBuilder<unknown>>> = {
    ...REQUEUED,
    max_attempts: sql`${from}.attempts + ${from}.max_attempts`,
  };
  const columns = JOB_COLUMN_NAMES.map((column) => sql.id(column));
  const selected = JOB_COLUMN_NAMES.map((column) => values[column] ?? sql`${from}.${sql.id(column)}`);
  return sql`INSERT INTO ${jobsTable(schema)} (${sql.join(columns)})
  SELECT ${sql.join(selected)} FROM ${from}`;
}
