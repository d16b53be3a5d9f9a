import { sql, type Kysely } from "kysely";

/** What the statistics collector says about the `jobs` table. */
export interface TableHealth {
  readonly liveRows: number;
  readonly deadRows: number;
  /** Table, indexes and TOAST, in bytes. */
  readonly totalBytes: number;
  /** The later of the last manual and automatic vacuum, or `null` if never. */
  readonly lastVacuumAt: Date | null;
  /** Milliseconds since then, on the database clock. */
  readonly lastVacuumAgeMs: number | null;
}

/**
 * Live and dead tuples, size and last vacuum of `<schema>.jobs`, from
 * `pg_stat_user_tables` (statistics lag by up to a second or so), or
 * `undefined` when the table has no statistics row.
 *
 * ### SQL
 * ```sql
 * SELECT n_live_tup, n_dead_tup, pg_total_relation_size(relid) AS total_bytes,
 *        greatest(last_vacuum, last_autovacuum) AS last_vacuum_at, …
 *   FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'jobs'
 * ```
 *
 * @example
 * ```ts
 * const health = await readTableHealth(db, "stint");
 * if (health && health.deadRows > health.liveRows) console.warn("jobs is bloated");
 * ```
 */
export async function readTableHealth(executor: Kysely<any>, schema: string): Promise<TableHealth | undefined> {
  const { rows } = await sql<{
    live: string;
    dead: string;
    total_bytes: string;
    last_vacuum_at: Date | null;
    last_vacuum_age_ms: string | null;
  }>`SELECT n_live_tup AS live, n_dead_tup AS dead, pg_total_relation_size(relid) AS total_bytes,
       greatest(last_vacuum, last_autovacuum) AS last_vacuum_at,
       floor(extract(epoch FROM now() - greatest(last_vacuum, last_autovacuum)) * 1000)::bigint AS last_vacuum_age_ms
  FROM pg_stat_user_tables
 WHERE schemaname = ${schema} AND relname = 'jobs'`.execute(executor);
  const row = rows[0];
  if (row === undefined) return undefined;
  return Object.freeze({
    liveRows: Number(row.live),
    deadRows: Number(row.dead),
    totalBytes: Number(row.total_bytes),
    lastVacuumAt: row.last_vacuum_at,
    lastVacuumAgeMs: row.last_vacuum_age_ms === null ? null : Number(row.last_vacuum_age_ms),
  });
}
