import { sql } from "kysely";
import type { Migration } from "./migration";
import { claimGroupTurnsFunction, enterJobGroupFunction } from "./job-groups-functions";

/**
 * Version 23: groups (a fair share per tenant, and a cap per tenant) and
 * serial keys (one job at a time per key, in enqueue order).
 *
 * - `jobs.group_key` (and `finished_jobs.group_key`): the job's group, or
 *   `''` for none. A serial key is stored here too, with `jobs.serial`
 *   saying what its line does when a job of it dies (`hold`, the default,
 *   or `release`); `NULL` for every job that is not on a line. A default
 *   of `''` costs existing rows nothing (no rewrite) and lets one index
 *   serve both: `jobs_claim_idx` becomes `(queue, group_key, priority
 *   DESC, run_at, id)`, so a queue without groups claims with
 *   `group_key = ''` in the same order as before, and a group's due jobs
 *   are one range of the same index.
 * - `jobs_line_idx`: a line's waiting jobs in enqueue (id) order, partial
 *   on serial jobs, so that finding a line's head reads one entry.
 * - `jobs_group_running_idx`: running jobs per group, partial on grouped
 *   jobs, for the per-group cap's count.
 * - `job_groups`: one row per group (and line) of a queue that has waiting
 *   jobs; claims of a grouped queue take turns among these rows, each
 *   claimer going round them in key order (see `claim_group_turns`). A group's row is created by its first waiting job
 *   (`enter_job_group`, a trigger on insert) and removed by a claim that
 *   finds nothing of it waiting or running: a job that goes back to wait
 *   (a retry) finds its group's row still there, so updates need no
 *   trigger. `held_by` names the dead job that holds a serial line.
 * - `queues.grouped`: set with a queue's first group; a claim that finds it
 *   set switches to the grouped claim (it is one of the "controls" of
 *   version 11). `queues.max_running_per_group`: the cap per group.
 */
export const jobGroupsMigration: Migration = Object.freeze({
  version: 23,
  name: "job-groups",
  statements: (schema: string) => {
    const jobs = sql.id(schema, "jobs");
    const finished = sql.id(schema, "finished_jobs");
    const queues = sql.id(schema, "queues");
    const groups = sql.id(schema, "job_groups");
    return [
      sql`ALTER TABLE ${jobs}
  ADD COLUMN group_key text NOT NULL DEFAULT '' CONSTRAINT jobs_group_key_check CHECK (char_length(group_key) <= 256),
  ADD COLUMN serial text CONSTRAINT jobs_serial_check CHECK (serial IS NULL OR (serial IN ('hold', 'release') AND group_key <> ''))`,
      sql`ALTER TABLE ${finished} ADD COLUMN group_key text NOT NULL DEFAULT '', ADD COLUMN serial text`,
      sql`CREATE OR REPLACE VIEW ${sql.id(schema, "all_jobs")} AS
  SELECT * FROM ${jobs}
  UNION ALL
  SELECT * FROM ${finished}`,
      sql`CREATE INDEX jobs_claim_group_idx ON ${jobs} (queue, group_key, priority DESC, run_at, id) WHERE state IN ('queued', 'failed')`,
      sql`DROP INDEX ${sql.id(schema, "jobs_claim_idx")}`,
      sql`ALTER INDEX ${sql.id(schema, "jobs_claim_group_idx")} RENAME TO jobs_claim_idx`,
      sql`CREATE INDEX jobs_line_idx ON ${jobs} (queue, group_key, id) WHERE serial IS NOT NULL AND state IN ('queued', 'failed')`,
      sql`CREATE INDEX jobs_group_running_idx ON ${jobs} (queue, group_key) WHERE state = 'running' AND group_key <> ''`,
      sql`ALTER TABLE ${queues}
  ADD COLUMN grouped boolean NOT NULL DEFAULT false,
  ADD COLUMN max_running_per_group integer CONSTRAINT queues_max_running_per_group_check CHECK (max_running_per_group >= 1)`,
      sql`CREATE TABLE ${groups} (
  queue text NOT NULL,
  group_key text NOT NULL,
  serial boolean NOT NULL DEFAULT false,
  held_by bigint,
  CONSTRAINT job_groups_pkey PRIMARY KEY (queue, group_key)
) WITH (fillfactor = 50)`,
      enterJobGroupFunction(schema),
      sql`CREATE TRIGGER jobs_enter_group AFTER INSERT ON ${jobs}
  FOR EACH ROW WHEN (NEW.group_key <> '' AND NEW.state IN ('queued', 'failed'))
  EXECUTE FUNCTION ${sql.id(schema, "enter_job_group")}()`,
      claimGroupTurnsFunction(schema),
      sql`DROP TRIGGER queues_notify_changed ON ${queues}`,
      sql`CREATE TRIGGER queues_notify_changed AFTER INSERT OR UPDATE OF paused, max_running, rate_limit, rate_period_ms, max_running_per_group ON ${queues}
  FOR EACH ROW EXECUTE FUNCTION ${sql.id(schema, "notify_queue_changed")}()`,
    ];
  },
});
