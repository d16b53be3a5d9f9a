import { sql, type Kysely } from "kysely";

/**
 * Resolves when the database answers a trivial query (for readiness probes).
 *
 * ### SQL
 * ```sql
 * SELECT 1
 * ```
 *
 * @example
 * ```ts
 * await ping(db); // rejects when no connection can be made
 * ```
 */
export async function ping(executor: Kysely<any>): Promise<void> {
  await sql`SELECT 1`.execute(executor);
}
