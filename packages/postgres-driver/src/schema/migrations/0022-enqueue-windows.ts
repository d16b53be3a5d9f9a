import { sql } from "kysely";
import type { Migration } from "./migration";
import { enqueueFunctionStatement } from "./enqueue-function-statement";
import { enqueueWindowsFunctionStatements } from "./enqueue-function-windows";

/**
 * Version 22: unique windows, start-by deadlines and the `enqueue(…)`
 * function that takes both.
 *
 * - `jobs.start_by` and `finished_jobs.start_by`: no attempt of the job
 *   starts after it (`startBy`, `expireInMs`); `NULL` for most jobs, so
 *   the column costs a row nothing but its null bit. `all_jobs` is
 *   replaced to show it.
 * - `jobs.follows` and `finished_jobs.follows`: the job a follow-up run
 *   follows (`replace`/`debounce` of a key whose holder had started); the
 *   claim leaves a follow-up while that job is still in `jobs` (active), so
 *   the two never run at once and a burst of enqueues during one run
 *   leaves one follow-up. `NULL` for every other job.
 * - `jobs_start_by_idx`, partial on waiting jobs that have a deadline: the
 *   expiry sweep finds expired jobs in it without reading the backlog, and
 *   a queue that never sets a deadline keeps it empty.
 * - `unique_windows`: one row per queue and unique key, naming the window's
 *   first job and when the window closes. Its primary key is what makes
 *   concurrent enqueues of one key take turns, and the lookup of a window
 *   is one primary-key probe, never a read of the history (the first job
 *   may long have moved to `finished_jobs`). Closed windows are reused by
 *   the next enqueue of their key and deleted by the expiry sweep.
 * - `enqueue(…)` gains `unique_key`, `unique_for`, `start_by` and
 *   `expire_in`, and gives a holder that has started one follow-up under
 *   `replace` and `debounce` (see `windowParts`); a new function, which
 *   keeps the old one's grants (see `enqueueWindowsFunctionStatements`).
 */
export const enqueueWindowsMigration: Migration = Object.freeze({
  version: 22,
  name: "enqueue-windows",
  statements: (schema: string) => {
    const jobs = sql.id(schema, "jobs");
    const finished = sql.id(schema, "finished_jobs");
    return [
      sql`ALTER TABLE ${jobs} ADD COLUMN start_by timestamptz, ADD COLUMN follows bigint`,
      sql`ALTER TABLE ${finished} ADD COLUMN start_by timestamptz, ADD COLUMN follows bigint`,
      sql`CREATE OR REPLACE VIEW ${sql.id(schema, "all_jobs")} AS
  SELECT * FROM ${jobs}
  UNION ALL
  SELECT * FROM ${finished}`,
      sql`CREATE INDEX jobs_start_by_idx ON ${jobs} (start_by) WHERE start_by IS NOT NULL AND state IN ('queued', 'failed')`,
      sql`CREATE TABLE ${sql.id(schema, "unique_windows")} (
  queue text NOT NULL,
  key text NOT NULL CONSTRAINT unique_windows_key_check CHECK (char_length(key) BETWEEN 1 AND 1024),
  job_id bigint NOT NULL,
  until timestamptz NOT NULL,
  CONSTRAINT unique_windows_pkey PRIMARY KEY (queue, key)
)`,
      sql`CREATE INDEX unique_windows_until_idx ON ${sql.id(schema, "unique_windows")} (until)`,
      ...enqueueWindowsFunctionStatements(schema, enqueueFunctionStatement(schema, { events: true, windows: true })),
    ];
  },
});
