import type { JobState } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { jobsTable } from "./job-row";

/**
 * Counts the jobs of a queue and/or some states, but stops at `cap + 1`:
 * a figure a dashboard can show on every refresh ("10,000+") without
 * counting a whole state of a large table. Reads the same index ranges as
 * `browseJobs`.
 *
 * ### SQL
 * ```sql
 * SELECT count(*) FROM (SELECT 1 FROM "stint"."jobs"
 *   WHERE true [AND queue = $1] [AND state = ANY($2::text[])] LIMIT $3 + 1) AS capped
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
  const conditions = [sql`true`];
  if (params.queue !== undefined) conditions.push(sql`queue = ${params.queue}`);
  if (params.states !== undefined) conditions.push(sql`state = ANY(${[...params.states]}::text[])`);
  const { rows } = await sql<{ jobs: string }>`SELECT count(*) AS jobs FROM (
  SELECT 1 FROM ${jobsTable(schema)} WHERE ${sql.join(conditions, sql` AND `)} LIMIT ${params.cap + 1}::integer) AS capped`.execute(executor);
  return Number(rows[0]?.jobs ?? 0);
}
