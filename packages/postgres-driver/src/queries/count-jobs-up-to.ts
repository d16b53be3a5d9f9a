import type { JobState } from "@stint/core";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { finishedJobsTable } from "./finished-jobs";
import { jobsTable } from "./job-row";
import { finishedStatesAmong } from "./newest-jobs";

/**
 * Counts the jobs of a queue and/or some states, in `jobs` and
 * `finished_jobs` together, but stops at `cap + 1`: a figure a dashboard
 * can show on every refresh ("10,000+") without counting a whole state of
 * a large table. Reads the same index ranges as `browseJobs`.
 *
 * `finished_jobs` is read first, and only when a state asked for can be
 * there: a count of succeeded jobs usually reaches its cap in the history
 * and never reads `jobs`, where succeeded rows are only the few an upgrade
 * has not moved yet and no index finds them.
 *
 * ### SQL
 * ```sql
 * SELECT count(*) FROM (
 *   SELECT 1 FROM "stint"."finished_jobs" WHERE true [AND queue = $1] [AND state = ANY($2::text[])]
 *   UNION ALL
 *   SELECT 1 FROM "stint"."jobs" WHERE true [AND queue = $1] [AND state = ANY($3::text[])]
 *   LIMIT $4 + 1) AS capped
 * ```
 *
 * @example
 * ```ts
 * const dead = await countJobsUpTo(db, "stint", { queue: "send-invoice", states: ["dead"], cap: 10_000 });
 * console.log(dead > 10_000 ? "10,000+" : String(dead));
 * ```
 */
export async function countJobsUpTo(
  executor: Kysely<any>,
  schema: string,
  params: { readonly queue?: string; readonly states?: readonly JobState[]; readonly cap: number },
): Promise<number> {
  const rows = (table: RawBuilder<unknown>, states: readonly JobState[] | undefined): RawBuilder<unknown> => {
    const conditions = [sql`true`];
    if (params.queue !== undefined) conditions.push(sql`queue = ${params.queue}`);
    if (states !== undefined) conditions.push(sql`state = ANY(${[...states]}::text[])`);
    return sql`SELECT 1 FROM ${table} WHERE ${sql.join(conditions, sql` AND `)}`;
  };
  const finished = finishedStatesAmong(params.states);
  const reads = [rows(jobsTable(schema), params.states)];
  if (finished.length > 0) reads.unshift(rows(finishedJobsTable(schema), params.states === undefined ? undefined : finished));
  const { rows: counted } = await sql<{ jobs: string }>`SELECT count(*) AS jobs FROM (
  ${sql.join(reads, sql`\n  UNION ALL\n  `)}
  LIMIT ${params.cap + 1}::integer) AS capped`.execute(executor);
  return Number(counted[0]?.jobs ?? 0);
}
