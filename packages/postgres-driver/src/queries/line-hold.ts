import { sql, type RawBuilder } from "kysely";

/**
 * An `INSERT` (for a CTE of a statement that moves dead jobs out of
 * `jobs`) by which each dead job of a serial line that holds on death
 * (`serial = 'hold'`) holds its line: `job_groups.held_by` names it, and
 * no claim takes the line's next job until the dead job comes back
 * (retried, see `enter_job_group`) or an operator releases the line. The
 * line's row is created if the claim had removed it. Reads nothing when
 * `source` has no such job.
 *
 * @example
 * ```ts
 * sql`WITH died AS (DELETE FROM … RETURNING jobs.*), holds AS (${lineHoldInsert("stint", "died")}) SELECT …`;
 * ```
 */
export function lineHoldInsert(schema: string, source: string): RawBuilder<unknown> {
  const from = sql.id(source);
  return sql`INSERT INTO ${sql.id(schema, "job_groups")} AS g (queue, group_key, serial, held_by)
  SELECT DISTINCT ON (${from}.queue, ${from}.group_key) ${from}.queue, ${from}.group_key, true, ${from}.id FROM ${from}
   WHERE ${from}.serial = 'hold'
   ORDER BY ${from}.queue, ${from}.group_key, ${from}.id
  ON CONFLICT (queue, group_key) DO UPDATE SET held_by = excluded.held_by`;
}

/**
 * An `INSERT` (for a CTE of a statement that puts finished jobs back to wait
 * in place, in `jobs`: rows an older version left there) that does for
 * them what the insert trigger `enter_job_group` does for a job that comes
 * back through an insert: its group's row exists again, and a line that
 * the job held on its death is released. The row is locked until the
 * statement's transaction ends (`DO UPDATE`), so a claim cannot remove it
 * meanwhile. `source` needs `id`, `queue`, `group_key` and `serial`.
 *
 * @example
 * ```ts
 * sql`WITH requeued AS (UPDATE … RETURNING id, queue, group_key, serial), regrouped AS (${regroupInsert("stint", "requeued")}) SELECT …`;
 * ```
 */
export function regroupInsert(schema: string, source: string): RawBuilder<unknown> {
  const from = sql.id(source);
  return sql`INSERT INTO ${sql.id(schema, "job_groups")} AS g (queue, group_key, serial)
  SELECT DISTINCT ${from}.queue, ${from}.group_key, ${from}.serial IS NOT NULL FROM ${from} WHERE ${from}.group_key <> ''
  ON CONFLICT (queue, group_key) DO UPDATE SET held_by = CASE WHEN g.held_by IN (SELECT ${from}.id FROM ${from}) THEN NULL ELSE g.held_by END`;
}
