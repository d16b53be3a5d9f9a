import { sql, type Kysely } from "kysely";

/** The oldest open transaction in the current database. */
export interface OldestTransaction {
  readonly pid: number;
  readonly applicationName: string;
  /** `active`, `idle in transaction`, … (`null` for sessions of other roles without `pg_read_all_stats`). */
  readonly state: string | null;
  readonly ageMs: number;
}

/**
 * The oldest transaction open in the current database (other than this
 * session's), from `pg_stat_activity.xact_start`, or `undefined`. A long
 * transaction anywhere in the database holds back vacuum on every table,
 * `jobs` included. Prepared transactions older than `preparedOlderThanMs`
 * are counted too: they hold vacuum back the same way.
 *
 * ### SQL
 * ```sql
 * SELECT pid, application_name, state, floor(extract(epoch FROM now() - xact_start) * 1000) AS age_ms
 *   FROM pg_stat_activity
 *  WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
 *  ORDER BY xact_start LIMIT 1;
 * SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database() AND prepared < now() - $1 * interval '1 millisecond';
 * ```
 *
 * @example
 * ```ts
 * const oldest = await readOldestTransaction(db, 300_000);
 * if (oldest && oldest.ageMs > 300_000) console.warn(`pid ${oldest.pid} holds back vacuum`);
 * ```
 */
export async function readOldestTransaction(
  executor: Kysely<any>,
  preparedOlderThanMs: number,
): Promise<{ readonly oldest: OldestTransaction | undefined; readonly oldPrepared: number }> {
  const { rows } = await sql<{ pid: number; application_name: string; state: string | null; age_ms: string }>`SELECT
       pid, application_name, state, floor(extract(epoch FROM now() - xact_start) * 1000)::bigint AS age_ms
  FROM pg_stat_activity
 WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
 ORDER BY xact_start
 LIMIT 1`.execute(executor);
  const prepared = await sql<{ old_prepared: number }>`SELECT count(*)::integer AS old_prepared
  FROM pg_prepared_xacts
 WHERE database = current_database() AND prepared < now() - (${preparedOlderThanMs}::double precision * interval '1 millisecond')`.execute(executor);
  const row = rows[0];
  const oldest =
    row === undefined ? undefined : Object.freeze({ pid: row.pid, applicationName: row.application_name, state: row.state, ageMs: Number(row.age_ms) });
  return Object.freeze({ oldest, oldPrepared: prepared.rows[0]?.old_prepared ?? 0 });
}
