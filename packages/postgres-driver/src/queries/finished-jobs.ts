import { sql, type RawBuilder } from "kysely";
import { JOB_COLUMN_NAMES, JOB_COLUMNS, type JobColumn } from "./job-row";

/** `"<schema>"."finished_jobs"`: succeeded, dead and cancelled jobs, partitioned by finishing day (migration 15). */
export function finishedJobsTable(schema: string): RawBuilder<unknown> {
  return sql.id(schema, "finished_jobs");
}

/** `"<schema>"."all_jobs"`: the view of `jobs` and `finished_jobs` together, for reads that may find either. */
export function allJobsView(schema: string): RawBuilder<unknown> {
  return sql.id(schema, "all_jobs");
}

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
export function moveToFinished(schema: string, source: string, values: JobValues): RawBuilder<unknown> {
  return insertJobRows(finishedJobsTable(schema), source, values);
}

/** New values of some columns of a job row, as SQL expressions. */
export type JobValues = Partial<Record<JobColumn, RawBuilder<unknown>>>;

/**
 * `INSERT INTO <table> (<every column>) SELECT … FROM <source>`: each
 * column copied from `source` (a CTE of job rows) unless `values` gives its
 * expression. The one way a job row moves from one table to the other.
 *
 * @example
 * ```ts
 * insertJobRows(jobsTable(schema), "removed", { state: sql`'queued'` });
 * ```
 */
export function insertJobRows(table: RawBuilder<unknown>, source: string, values: JobValues): RawBuilder<unknown> {
  const from = sql.id(source);
  const selected = JOB_COLUMN_NAMES.map((column) => values[column] ?? sql`${from}.${sql.id(column)}`);
  return sql`INSERT INTO ${table} (${JOB_COLUMNS})
  SELECT ${sql.join(selected)} FROM ${from}`;
}
