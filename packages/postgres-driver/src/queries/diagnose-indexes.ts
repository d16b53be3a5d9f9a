import { sql, type Kysely } from "kysely";

/** An index the migrations create, and the version that creates it. */
export interface ExpectedIndex {
  readonly table: string;
  readonly name: string;
  readonly since: number;
  /** Created only where the migration could install an extension (`pg_trgm`): not reported when missing. */
  readonly optional?: boolean;
}

/**
 * Every index the migrations create (a test checks this against a freshly
 * migrated schema). An index of `finished_jobs` is on the partitioned table:
 * each partition has its own copy, and the parent's is valid only while
 * every partition has one.
 */
export const EXPECTED_INDEXES: readonly ExpectedIndex[] = Object.freeze([
  { table: "jobs", name: "jobs_pkey", since: 1 },
  { table: "jobs", name: "jobs_claim_idx", since: 1 },
  { table: "jobs", name: "jobs_lease_idx", since: 1 },
  { table: "jobs", name: "jobs_dedupe_key_idx", since: 1 },
  { table: "jobs", name: "jobs_finished_idx", since: 1 },
  { table: "migrations", name: "migrations_pkey", since: 1 },
  { table: "schedules", name: "schedules_pkey", since: 2 },
  { table: "schedules", name: "schedules_due_idx", since: 2 },
  { table: "effects", name: "effects_pkey", since: 3 },
  { table: "effects", name: "effects_created_at_idx", since: 3 },
  { table: "job_attempts", name: "job_attempts_pkey", since: 5 },
  { table: "job_attempts", name: "job_attempts_job_idx", since: 5 },
  { table: "queues", name: "queues_pkey", since: 7 },
  { table: "job_waiters", name: "job_waiters_pkey", since: 8 },
  { table: "dead_hooks", name: "dead_hooks_pkey", since: 9 },
  { table: "dead_hooks", name: "dead_hooks_claim_idx", since: 9 },
  { table: "leader_leases", name: "leader_leases_pkey", since: 14 },
  { table: "finished_jobs", name: "finished_jobs_id_idx", since: 15 },
  { table: "finished_jobs", name: "finished_jobs_dead_idx", since: 15 },
  { table: "finished_jobs", name: "finished_jobs_finished_at_idx", since: 15 },
  { table: "job_event_listeners", name: "job_event_listeners_pkey", since: 17 },
  { table: "job_logs", name: "job_logs_pkey", since: 18 },
  { table: "finished_jobs", name: "finished_jobs_queue_idx", since: 19 },
  { table: "jobs", name: "jobs_last_error_trgm_idx", since: 19, optional: true },
  { table: "finished_jobs", name: "finished_jobs_last_error_trgm_idx", since: 19, optional: true },
  { table: "jobs", name: "jobs_start_by_idx", since: 21 },
  { table: "unique_windows", name: "unique_windows_pkey", since: 21 },
  { table: "unique_windows", name: "unique_windows_until_idx", since: 21 },
  { table: "jobs", name: "jobs_line_idx", since: 23 },
  { table: "jobs", name: "jobs_group_running_idx", since: 23 },
  { table: "job_groups", name: "job_groups_pkey", since: 23 },
  { table: "finished_jobs", name: "finished_jobs_group_idx", since: 25 },
  { table: "workflows", name: "workflows_pkey", since: 26 },
  { table: "workflows", name: "workflows_name_idx", since: 26 },
  { table: "jobs", name: "jobs_workflow_idx", since: 26 },
  { table: "jobs", name: "jobs_blocked_idx", since: 26 },
  { table: "finished_jobs", name: "finished_jobs_workflow_idx", since: 26 },
  { table: "workflow_deps", name: "workflow_deps_pkey", since: 26 },
  { table: "workflow_deps", name: "workflow_deps_job_idx", since: 26 },
  { table: "workflow_deps", name: "workflow_deps_workflow_idx", since: 26 },
]);

/** An index found in the schema. */
export interface IndexState {
  readonly table: string;
  readonly name: string;
  /** False after a failed `CREATE INDEX CONCURRENTLY` or `REINDEX CONCURRENTLY`: the planner ignores it. */
  readonly valid: boolean;
  /** False while a concurrent build has not reached the point where writes maintain it. */
  readonly ready: boolean;
}

/**
 * Every index of the schema's tables with its `pg_index.indisvalid` and
 * `indisready` flags, by name.
 *
 * ### SQL
 * ```sql
 * SELECT t.relname AS table_name, c.relname AS index_name, i.indisvalid AS valid, i.indisready AS ready
 *   FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
 *   JOIN pg_namespace n ON n.oid = t.relnamespace
 *  WHERE n.nspname = $1 ORDER BY c.relname
 * ```
 *
 * @example
 * ```ts
 * const broken = (await readIndexes(db, "stint")).filter((index) => !index.valid);
 * ```
 */
export async function readIndexes(executor: Kysely<any>, schema: string): Promise<readonly IndexState[]> {
  const { rows } = await sql<{ table_name: string; index_name: string; valid: boolean; ready: boolean }>`SELECT
       t.relname AS table_name, c.relname AS index_name, i.indisvalid AS valid, i.indisready AS ready
  FROM pg_index i
  JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_class t ON t.oid = i.indrelid
  JOIN pg_namespace n ON n.oid = t.relnamespace
 WHERE n.nspname = ${schema}
 ORDER BY c.relname COLLATE "C"`.execute(executor);
  return Object.freeze(rows.map((row) => Object.freeze({ table: row.table_name, name: row.index_name, valid: row.valid, ready: row.ready })));
}
