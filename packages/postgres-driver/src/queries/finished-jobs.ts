import { sql, type RawBuilder } from "kysely";

/** `"<schema>"."finished_jobs"`: succeeded, dead and cancelled jobs, partitioned by finishing day (migration 15). */
export function finishedJobsTable(schema: string): RawBuilder<unknown> {
  return sql.id(schema, "finished_jobs");
}

/** `"<schema>"."all_jobs"`: the view of `jobs` and `finished_jobs` together, for reads that may find either. */
export function allJobsView(schema: string): RawBuilder<unknown> {
  return sql.id(schema, "all_jobs");
}

/** Every column a job row has, in `jobs` and in `finished_jobs` alike. */
export const JOB_COLUMN_NAMES = Object.freeze([
  "id",
  "queue",
  "priority",
  "max_attempts",
  "timeout_ms",
  "run_at",
  "created_at",
  "dedupe_key",
  "payload",
  "meta",
  "attempts",
  "locked_by",
  "started_at",
  "state",
  "updated_at",
  "locked_until",
  "finished_at",
  "duration_ms",
  "result",
  "last_error",
  "error_code",
  "progress",
] as const);

/** A column of a job row. */
export type JobColumn = (typeof JOB_COLUMN_NAMES)[number];

/**
 * `INSERT INTO finished_jobs (…) SELECT … FROM <source>`: the second half of
 * every statement that finishes jobs. `source` names a CTE of the same
 * statement that deleted the rows from `jobs` (`DELETE … RETURNING jobs.*`,
 * plus any columns the new values read); each column is copied from it
 * unless `values` gives the expression its finished row gets instead. A
 * data-modifying CTE runs whether or not the statement reads it, so the
 * move and the delete commit together, or neither does.
 *
 * @example
 * ```ts
 * sql`WITH done AS (DELETE FROM ${jobsTable(schema)} AS jobs WHERE … RETURNING jobs.*),
 * moved AS (${moveToFinished(schema, "done", { state: sql`'succeeded'`, finished_at: sql`statement_timestamp()` })})
 * SELECT id FROM done`;
 * ```
 */
export function moveToFinished(schema: string, source: string, values: Partial<Record<JobColumn, RawBuilder<unknown>>>): RawBuilder<unknown> {
  const columns = JOB_COLUMN_NAMES.map((column) => sql.id(column));
  const from = sql.id(source);
  const selected = JOB_COLUMN_NAMES.map((column) => values[column] ?? sql`${from}.${sql.id(column)}`);
  return sql`INSERT INTO ${finishedJobsTable(schema)} (${sql.join(columns)})
  SELECT ${sql.join(selected)} FROM ${from}`;
}
