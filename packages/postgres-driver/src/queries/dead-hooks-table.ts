import { sql, type RawBuilder } from "kysely";

/** `"<schema>"."dead_hooks"`, quoted: the deaths whose `onDead` hook has not run yet (migration 9). */
export function deadHooksTable(schema: string): RawBuilder<unknown> {
  return sql.id(schema, "dead_hooks");
}

/**
 * The pending `onDead` hook of each death a statement just committed, from
 * a CTE (`source`) of the rows it made `dead`, as `RETURNING` gave them:
 * `id`, `attempts`, `queue`, `error_code`, `last_error` (only the rows where
 * `condition` holds). A death already recorded is left as it is.
 *
 * @example
 * ```ts
 * sql`WITH died AS (UPDATE … RETURNING jobs.id, jobs.attempts, jobs.queue, …), hooks AS (${deadHookInsert(schema, "died")}) SELECT id FROM died`;
 * ```
 */
export function deadHookInsert(schema: string, source: string, condition: RawBuilder<unknown> = sql`true`): RawBuilder<unknown> {
  return sql`INSERT INTO ${deadHooksTable(schema)} (job_id, attempt, queue, error_code, last_error)
  SELECT died.id, died.attempts, died.queue, died.error_code, died.last_error
    FROM ${sql.ref(source)} AS died
   WHERE ${condition}
  ON CONFLICT (job_id, attempt) DO NOTHING`;
}
