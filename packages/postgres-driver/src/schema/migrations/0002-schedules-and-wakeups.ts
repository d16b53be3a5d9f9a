import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 2: periodic schedules, and wake-ups for idle workers.
 *
 * - `schedules` — one row per named schedule; `schedules_due_idx` finds the
 *   enabled ones whose `next_run_at` has passed.
 * - `notify_jobs_inserted()` and the statement-level trigger
 *   `jobs_notify_inserted` — after each INSERT into `jobs`, one
 *   `pg_notify(<channel>, <queue>)` per distinct queue among the inserted
 *   rows that are due now. The channel is `stint_jobs_<schema>` (cut to 63
 *   characters, see `wakeupChannel`), computed from `TG_TABLE_SCHEMA` so no
 *   schema name is baked into the function. A batch of 10 000 jobs costs one
 *   trigger call, and notifications are delivered only if the inserting
 *   transaction commits. (Migration 12 makes it a row trigger.)
 */
export const schedulesAndWakeupsMigration: Migration = Object.freeze({
  version: 2,
  name: "schedules-and-wakeups",
  statements: (schema: string) => {
    const schedules = sql.id(schema, "schedules");
    const notifyFunction = sql.id(schema, "notify_jobs_inserted");
    return [
      sql`CREATE TABLE ${schedules} (
  name text PRIMARY KEY CONSTRAINT schedules_name_check CHECK (char_length(name) BETWEEN 1 AND 200),
  queue text NOT NULL CONSTRAINT schedules_queue_check CHECK (char_length(queue) BETWEEN 1 AND 128),
  cron text NOT NULL,
  time_zone text NOT NULL,
  payload jsonb NOT NULL,
  catch_up integer NOT NULL DEFAULT 1 CONSTRAINT schedules_catch_up_check CHECK (catch_up >= 0),
  enabled boolean NOT NULL DEFAULT true,
  priority smallint NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 25 CONSTRAINT schedules_max_attempts_check CHECK (max_attempts >= 1),
  timeout_ms integer CONSTRAINT schedules_timeout_ms_check CHECK (timeout_ms > 0),
  next_run_at timestamptz NOT NULL,
  last_fired_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
)`,
      sql`CREATE INDEX schedules_due_idx ON ${schedules} (next_run_at) WHERE enabled`,
      sql`CREATE FUNCTION ${notifyFunction}() RETURNS trigger LANGUAGE plpgsql AS $function$
BEGIN
  PERFORM pg_notify(left('stint_jobs_' || TG_TABLE_SCHEMA, 63), due.queue)
     FROM (SELECT DISTINCT queue FROM inserted WHERE run_at <= now()) AS due;
  RETURN NULL;
END
$function$`,
      sql`CREATE TRIGGER jobs_notify_inserted
  AFTER INSERT ON ${sql.id(schema, "jobs")}
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION ${notifyFunction}()`,
    ];
  },
});
