import { sql, type Kysely } from "kysely";

/** A session that sits inside an open transaction doing nothing. */
export interface IdleInTransaction {
  readonly pid: number;
  readonly applicationName: string;
  readonly idleMs: number;
}

/**
 * Sessions of the current database whose `application_name` starts with
 * `prefix` and that have been `idle in transaction` for more than
 * `idleMs`, longest first (at most 10). stint never leaves a transaction
 * open between statements for long, so one is a bug or a stuck process,
 * and it holds its locks and vacuum back.
 *
 * ### SQL
 * ```sql
 * SELECT pid, application_name, floor(extract(epoch FROM now() - state_change) * 1000) AS idle_ms
 *   FROM pg_stat_activity
 *  WHERE datname = current_database() AND state IN ('idle in transaction', 'idle in transaction (aborted)')
 *    AND left(application_name, length($1)) = $1 AND state_change < now() - $2 * interval '1 millisecond'
 *  ORDER BY state_change LIMIT 10
 * ```
 *
 * @example
 * ```ts
 * const idle = await readIdleInTransaction(db, "stint", 10_000);
 * ```
 */
export async function readIdleInTransaction(executor: Kysely<any>, prefix: string, idleMs: number): Promise<readonly IdleInTransaction[]> {
  const { rows } = await sql<{ pid: number; application_name: string; idle_ms: string }>`SELECT
       pid, application_name, floor(extract(epoch FROM now() - state_change) * 1000)::bigint AS idle_ms
  FROM pg_stat_activity
 WHERE datname = current_database() AND state IN ('idle in transaction', 'idle in transaction (aborted)')
   AND left(application_name, length(${prefix}::text)) = ${prefix}::text
   AND state_change < now() - (${idleMs}::double precision * interval '1 millisecond')
 ORDER BY state_change
 LIMIT 10`.execute(executor);
  return Object.freeze(rows.map((row) => Object.freeze({ pid: row.pid, applicationName: row.application_name, idleMs: Number(row.idle_ms) })));
}
