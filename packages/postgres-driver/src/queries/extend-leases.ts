import type { ExtendedLeases, ExtendLeasesParams } from "@stint/core/driver";
import { sql } from "kysely";
import type { Statements } from "../connection/statement";
import { jobsTable, millisecondsInterval } from "./job-row";
import { namedStatement } from "./named-statement";
import { allJobsView } from "./finished-jobs";
import { heldBy } from "./held-by";

const NONE: ExtendedLeases = Object.freeze({ extended: Object.freeze([]), cancelled: Object.freeze([]) });

/**
 * Extends to `now() + leaseMs` the leases the worker still holds, in one
 * statement; returns the ids it extended, and, of the others, the ids an
 * operator cancelled in the attempt the worker holds while it was their
 * owner (`cancelJob` keeps `locked_by`): the heartbeat is how a worker
 * that hears no notifications (behind a transaction pooler, say) learns of
 * a cancel. A job another worker reclaimed (or that was rescued, finished,
 * or cancelled in another worker's attempt) is neither touched nor returned.
 * Only the held jobs the update did not extend (usually none) are looked
 * up again, each by primary key in a subquery of its own; the state tests
 * are written `(…) IS TRUE` so that no partial index on `state` is matched
 * to them (see `heldBy`).
 *
 * ### SQL
 * ```sql
 * WITH held AS (SELECT * FROM unnest($3::bigint[], $4::integer[]) AS held(id, attempt)),
 * extended AS (
 *   UPDATE "stint"."jobs" AS jobs
 *      SET locked_until = now() + $2 * interval '1 millisecond', updated_at = now()
 *     FROM held
 *    WHERE jobs.id = held.id AND jobs.attempts = held.attempt
 *      AND jobs.locked_by = $1 AND (jobs.state = 'running') IS TRUE
 *   RETURNING jobs.id),
 * missed AS MATERIALIZED (
 *   SELECT held.id, held.attempt FROM held WHERE NOT EXISTS (SELECT FROM extended WHERE extended.id = held.id))
 * SELECT id, false AS cancelled FROM extended
 * UNION ALL
 * SELECT missed.id, true FROM missed
 *  WHERE (SELECT true FROM "stint"."all_jobs" AS jobs   -- a cancelled job has moved to finished_jobs
 *          WHERE jobs.id = missed.id AND jobs.attempts = missed.attempt
 *            AND jobs.locked_by = $1 AND (jobs.state = 'cancelled') IS TRUE)
 * ```
 *
 * @example
 * ```ts
 * const { extended, cancelled } = await extendLeases(runner, "stint", { workerId, leaseMs: 60_000, jobs: [{ id: "812", attempt: 2 }] });
 * ```
 */
export async function extendLeases(statements: Statements, schema: string, params: ExtendLeasesParams): Promise<ExtendedLeases> {
  if (params.jobs.length === 0) return NONE;
  const jobs = jobsTable(schema);
  const { rows } = await statements.run<{ id: string; cancelled: boolean }>(
    namedStatement(sql`WITH held AS (
  SELECT * FROM unnest(${params.jobs.map((job) => job.id)}::bigint[], ${params.jobs.map((job) => job.attempt)}::integer[]) AS held(id, attempt)
),
extended AS (
  UPDATE ${jobs} AS jobs
     SET locked_until = now() + ${millisecondsInterval(params.leaseMs)}, updated_at = now()
    FROM held
   WHERE jobs.id = held.id AND jobs.attempts = held.attempt
     AND ${heldBy(params.workerId)}
  RETURNING jobs.id
),
missed AS MATERIALIZED (
  SELECT held.id, held.attempt FROM held WHERE NOT EXISTS (SELECT FROM extended WHERE extended.id = held.id)
)
SELECT id, false AS cancelled FROM extended
UNION ALL
SELECT missed.id, true FROM missed
 WHERE (SELECT true FROM ${allJobsView(schema)} AS jobs
         WHERE jobs.id = missed.id AND jobs.attempts = missed.attempt
           AND jobs.locked_by = ${params.workerId} AND (jobs.state = 'cancelled') IS TRUE)`),
  );
  const extended: string[] = [];
  const cancelled: string[] = [];
  for (const row of rows) (row.cancelled ? cancelled : extended).push(String(row.id));
  return Object.freeze({ extended: Object.freeze(extended), cancelled: Object.freeze(cancelled) });
}
