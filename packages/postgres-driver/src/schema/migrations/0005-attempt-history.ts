import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 5: attempt history, job meta and progress.
 *
 * - `job_attempts` — one row per attempt that did not succeed (`failed`,
 *   `dead`, `lease-lost`, `cancelled`, `shutdown`, `snoozed`), inserted by
 *   the statement that records the outcome (or takes over the lapsed
 *   lease, or cancels), so history and the job's state never disagree.
 *   The key is a surrogate: an attempt given back without spending its
 *   number (a snooze, a shutdown) shares the number with the next one.
 *   `job_attempts_job_idx` serves `listAttempts` and retention, which
 *   deletes a pruned job's rows in its own statement. No foreign key: the
 *   check would cost every failure a lookup, and nothing else deletes jobs.
 * - `jobs.meta` — the object given at enqueue (`null` for none, which costs
 *   a row nothing); `jobs.progress` — the latest `ctx.progress` value.
 *
 * The successful attempt writes no row: the job row already holds its
 * worker (`locked_by`), `started_at`, `finished_at`, `duration_ms` and
 * number (`attempts`). A history row per success (the row and its two
 * index entries) would add much of a completion's WAL again, on the
 * hottest path, for facts the job row already holds (see
 * docs/benchmarks.md, Figures behind the code).
 *
 * Adding nullable columns without a default rewrites nothing.
 */
export const attemptHistoryMigration: Migration = Object.freeze({
  version: 5,
  name: "attempt-history",
  statements: (schema: string) => {
    const attempts = sql.id(schema, "job_attempts");
    return [
      sql`CREATE TABLE ${attempts} (
  id bigserial PRIMARY KEY,
  job_id bigint NOT NULL,
  attempt integer NOT NULL,
  outcome text NOT NULL
    CONSTRAINT job_attempts_outcome_check CHECK (outcome IN ('failed', 'dead', 'lease-lost', 'cancelled', 'shutdown', 'snoozed')),
  worker_id text,
  started_at timestamptz,
  finished_at timestamptz NOT NULL DEFAULT now(),
  duration_ms integer,
  error_message text,
  error_code text,
  error_stack text
) WITH (autovacuum_vacuum_insert_scale_factor = 0.05)`,
      sql`CREATE INDEX job_attempts_job_idx ON ${attempts} (job_id, attempt)`,
      sql`ALTER TABLE ${sql.id(schema, "jobs")} ADD COLUMN meta jsonb, ADD COLUMN progress jsonb`,
    ];
  },
});
