import type { ExtendLeasesParams } from "@stint/core/driver";
import { sql } from "kysely";
import type { Statements } from "../connection/statement";
import { jobsTable, millisecondsInterval } from "./job-row";
import { namedStatement } from "./named-statement";
import { heldBy } from "./held-by";

/**
 * Extends to `now() + leaseMs` the leases the worker still holds, in one
 * statement; returns the ids it extended. A job another worker reclaimed
 * (or that was rescued, cancelled or finished) is not touched and not returned.
 *
 * ### SQL
 * ```sql
 * UPDATE "stint"."jobs" AS jobs
 *    SET locked_until = now() + $2 * interval '1 millisecond', updated_at = now()
 *   FROM unnest($3::bigint[], $4::integer[]) AS held(id, attempt)
 *  WHERE jobs.id = held.id AND jobs.attempts = held.attempt
 *    AND jobs.locked_by = $1 AND (jobs.state = 'running') IS TRUE
 * RETURNING jobs.id
 * ```
 *
 * @example
 * ```ts
 * const kept = await extendLeases(runner, "stint", { workerId, leaseMs: 60_000, jobs: [{ id: "812", attempt: 2 }] });
 * ```
 */
export async function extendLeases(statements: Statements, schema: string, params: ExtendLeasesParams): Promise<readonly string[]> {
  if (params.jobs.length === 0) return Object.freeze([]);
  const { rows } = await statements.run<{ id: string }>(
    namedStatement(sql`UPDATE ${jobsTable(schema)} AS jobs
   SET locked_until = now() + ${millisecondsInterval(params.leaseMs)}, updated_at = now()
  FROM unnest(${params.jobs.map((job) => job.id)}::bigint[], ${params.jobs.map((job) => job.attempt)}::integer[]) AS held(id, attempt)
 WHERE jobs.id = held.id AND jobs.attempts = held.attempt
   AND ${heldBy(params.workerId)}
RETURNING jobs.id`),
  );
  return Object.freeze(rows.map((row) => String(row.id)));
}
