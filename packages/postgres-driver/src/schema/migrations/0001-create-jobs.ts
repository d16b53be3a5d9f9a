import { sql } from "kysely";
import { JOBS_AUTOVACUUM, jobsActiveIndexes } from "./jobs-table-parts";
import type { Migration } from "./migration";

/**
 * Version 1: the `jobs` table and the indexes of its hot paths.
 *
 * - `jobs_claim_idx` — the claim: due jobs of a queue in
 *   `priority DESC, run_at, id` order, only over claimable rows;
 * - `jobs_lease_idx` — running jobs of a queue by lease expiry, for the
 *   reclaim inside the claim and for the lease rescue;
 * - `jobs_dedupe_key_idx` — a dedupe key is unique among a queue's active jobs;
 * - `jobs_finished_idx` — finished jobs by state and age, so retention deletes
 *   a range per state instead of scanning the table.
 *
 * The table churns (every job is updated several times), so it keeps free
 * space in each page for HOT updates (`fillfactor`) and is vacuumed and
 * analysed after a small fraction of changes instead of the default 20%.
 */
export const createJobsMigration: Migration = Object.freeze({
  version: 1,
  name: "create-jobs",
  statements: (schema: string) => {
    const jobs = sql.id(schema, "jobs");
    return [
      sql`CREATE TABLE ${jobs} (
  id bigserial PRIMARY KEY,
  queue text NOT NULL CONSTRAINT jobs_queue_check CHECK (char_length(queue) BETWEEN 1 AND 128),
  payload jsonb NOT NULL,
  state text NOT NULL DEFAULT 'queued'
    CONSTRAINT jobs_state_check CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'dead', 'cancelled')),
  priority smallint NOT NULL DEFAULT 0,
  attempts integer NOT NULL DEFAULT 0 CONSTRAINT jobs_attempts_check CHECK (attempts >= 0),
  max_attempts integer NOT NULL DEFAULT 25 CONSTRAINT jobs_max_attempts_check CHECK (max_attempts >= 1),
  run_at timestamptz NOT NULL DEFAULT now(),
  timeout_ms integer CONSTRAINT jobs_timeout_ms_check CHECK (timeout_ms > 0),
  locked_by text,
  locked_until timestamptz,
  dedupe_key text,
  last_error text,
  error_code text,
  result jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  duration_ms integer,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT jobs_running_is_locked CHECK (state <> 'running' OR (locked_by IS NOT NULL AND locked_until IS NOT NULL))
) WITH (
  fillfactor = 75,
  ${JOBS_AUTOVACUUM}
)`,
      ...jobsActiveIndexes(jobs),
      sql`CREATE INDEX jobs_finished_idx ON ${jobs} (state, finished_at)
  WHERE state IN ('succeeded', 'dead', 'cancelled')`,
    ];
  },
});
