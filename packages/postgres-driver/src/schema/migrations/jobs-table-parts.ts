import { sql, type RawBuilder } from "kysely";

/**
 * The autovacuum settings of `jobs` since version 1 (a `WITH (…)` list):
 * every job is updated several times within seconds, so the table is
 * vacuumed and analysed after 2 % of its rows changed.
 */
export const JOBS_AUTOVACUUM: RawBuilder<unknown> = sql.raw(`autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_analyze_scale_factor = 0.02,
  autovacuum_vacuum_insert_scale_factor = 0.05,
  autovacuum_vacuum_cost_limit = 2000`);

/**
 * The indexes of `jobs` that every table layout has had since version 1:
 * the claim's, the lease's and the dedupe key's. Migrations that build
 * `jobs` (1, and 6 which rebuilds it) create them and `JOBS_AUTOVACUUM`
 * from here. A change to any of them is a new migration, never an edit here.
 *
 * @example
 * ```ts
 * const statements = [createTable, ...jobsActiveIndexes(sql.id(schema, "jobs"))];
 * ```
 */
export function jobsActiveIndexes(jobs: RawBuilder<unknown>): readonly RawBuilder<unknown>[] {
  return [
    sql`CREATE INDEX jobs_claim_idx ON ${jobs} (queue, priority DESC, run_at, id)
  WHERE state IN ('queued', 'failed')`,
    sql`CREATE INDEX jobs_lease_idx ON ${jobs} (queue, locked_until)
  WHERE state = 'running'`,
    sql`CREATE UNIQUE INDEX jobs_dedupe_key_idx ON ${jobs} (queue, dedupe_key)
  WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running', 'failed')`,
  ];
}
