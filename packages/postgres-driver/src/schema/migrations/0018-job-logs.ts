import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 18: `job_logs`, the lines handlers write with `ctx.log`.
 *
 * One row per attempt that logged, keyed `(job_id, attempt)` like the
 * attempt history: `lines` is a JSON array of `{at, message, fields}`
 * objects, oldest first, and `dropped_lines` counts the older lines the
 * per-attempt limits pushed out. The worker buffers lines and appends
 * them in batches with one fenced upsert; a job that never logs has no
 * row, and no statement of the claim, heartbeat or completion path reads
 * or writes this table, so their cost is unchanged.
 *
 * A table of its own rather than a column: the successful attempt has no
 * `job_attempts` row (see version 5), and a column on `jobs` would be
 * rewritten by every update of the row and copied into `finished_jobs` by
 * every completion. Retention deletes a pruned job's rows in the
 * statement that deletes the job, and before a `finished_jobs` partition
 * is dropped, those of the jobs in it (a range scan of this table's key
 * over the partition's ids). No foreign key, for the reason version 9
 * gives.
 */
export const jobLogsMigration: Migration = Object.freeze({
  version: 18,
  name: "job-logs",
  statements: (schema: string) => [
    sql`CREATE TABLE ${sql.id(schema, "job_logs")} (
  job_id bigint NOT NULL,
  attempt integer NOT NULL,
  lines jsonb NOT NULL CONSTRAINT job_logs_lines_check CHECK (jsonb_typeof(lines) = 'array'),
  dropped_lines integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT job_logs_pkey PRIMARY KEY (job_id, attempt)
)`,
  ],
});
