import { sql, type Kysely } from "kysely";

/** What {@link estimateJobs} found: the planner's row estimates, not counts. */
export interface JobsEstimate {
  /** Rows of `jobs` (waiting, running, and finished ones not moved yet), about. */
  readonly active: number;
  /** Rows of `finished_jobs`, every partition together, about. */
  readonly finished: number;
}

/**
 * About how many jobs there are, from the statistics `ANALYZE` and
 * autovacuum keep (`pg_class.reltuples` of `jobs` and of each partition of
 * `finished_jobs`): a catalog read that costs the same at a billion rows,
 * for a figure a dashboard labels as an estimate ("about 1.2 M"). A table
 * never analysed counts as 0.
 *
 * ### SQL
 * ```sql
 * SELECT (SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = 'stint.jobs'::regclass) AS active,
 *        (SELECT coalesce(sum(greatest(c.reltuples, 0)), 0) FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
 *          WHERE i.inhparent = 'stint.finished_jobs'::regclass) AS finished
 * ```
 *
 * @example
 * ```ts
 * const { active, finished } = await estimateJobs(db, "stint");
 * console.log(`about ${Math.round((active + finished) / 1e5) / 10} M jobs`);
 * ```
 */
export async function estimateJobs(executor: Kysely<any>, schema: string): Promise<JobsEstimate> {
  const quoted = `"${schema.replace(/"/g, '""')}"`;
  const { rows } = await sql<{ active: number | null; finished: number | null }>`SELECT
  (SELECT greatest(reltuples, 0)::float8 FROM pg_catalog.pg_class WHERE oid = ${`${quoted}.jobs`}::regclass) AS active,
  (SELECT coalesce(sum(greatest(c.reltuples, 0)), 0)::float8
     FROM pg_catalog.pg_inherits AS i JOIN pg_catalog.pg_class AS c ON c.oid = i.inhrelid
    WHERE i.inhparent = ${`${quoted}.finished_jobs`}::regclass) AS finished`.execute(executor);
  return Object.freeze({ active: Math.round(Number(rows[0]?.active ?? 0)), finished: Math.round(Number(rows[0]?.finished ?? 0)) });
}
