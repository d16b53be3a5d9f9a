import { sql, type RawBuilder } from "kysely";

/**
 * The `ON CONFLICT` target that matches `jobs_dedupe_key_idx`: a dedupe key
 * is unique among a queue's active (`queued`, `running`, `failed`) jobs.
 */
export const DEDUPE_CONFLICT_TARGET: RawBuilder<unknown> = sql`(queue, dedupe_key) WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running', 'failed')`;

/**
 * `<column> IN ('queued', 'running', 'failed')`: the states in which a job
 * holds its dedupe key. The column defaults to `state`.
 */
export function isActive(column: RawBuilder<unknown> = sql.ref("state")): RawBuilder<boolean> {
  return sql<boolean>`${column} IN ('queued', 'running', 'failed')`;
}

/**
 * How many times an enqueue re-runs when its insert met a conflicting job it
 * could not see yet (the other transaction committed while this statement
 * waited for it, after this statement's snapshot was taken).
 */
export const MAX_DEDUPE_TRIES = 10;

/**
 * `<column> IN ('succeeded', 'dead', 'cancelled')`: the job has finished.
 * Since migration 15 such rows are in `finished_jobs`; in `jobs` only those
 * written before it, until they are moved.
 *
 * @example
 * ```ts
 * sql`SELECT count(*) FROM ${jobsTable(schema)} WHERE ${isFinished()}`;
 * ```
 */
export function isFinished(column: RawBuilder<unknown> = sql.ref("state")): RawBuilder<boolean> {
  return sql<boolean>`${column} IN ('succeeded', 'dead', 'cancelled')`;
}
