import { sql, type RawBuilder } from "kysely";

/**
 * The fence of a batch write to attempts a worker holds (a completion, a
 * retry, a death, a lease renewal): the row is still `running` and owned by
 * `workerId`. The batch statements join the table to the batch's rows on
 * `id`; the state test is written `(jobs.state = 'running') IS TRUE` so that
 * PostgreSQL cannot match it to `jobs_lease_idx` (whose predicate is
 * `state = 'running'`). Otherwise, on a table without statistics, it may
 * read every running job from that index and rescan the whole batch for each
 * — hundreds of milliseconds for a batch of a few hundred — where looking
 * each batch row up by primary key takes a few.
 *
 * @example
 * ```ts
 * sql`UPDATE … FROM unnest(…) AS held(id, attempt) WHERE jobs.id = held.id AND jobs.attempts = held.attempt AND ${heldBy(workerId)}`;
 * ```
 */
export function heldBy(workerId: string): RawBuilder<unknown> {
  return sql`jobs.locked_by = ${workerId} AND (jobs.state = 'running') IS TRUE`;
}
