import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 7: operator controls per queue.
 *
 * - `queues` — one row per queue an operator has set something on:
 *   `paused`; `max_running`, a cap on the queue's running jobs across all
 *   workers; `rate_limit` starts per `rate_period_ms`, kept as a token
 *   bucket (`rate_tokens` as of `rate_refilled_at`). A queue without a row,
 *   or whose row sets nothing, is claimed as before.
 * - `notify_queue_changed()` and its row trigger — every insert or update
 *   of a row sends the queue's name on the wake-up channel, so workers of a
 *   resumed queue (or of one whose limits rose) claim at once instead of at
 *   their next poll.
 */
export const queueControlsMigration: Migration = Object.freeze({
  version: 7,
  name: "queue-controls",
  statements: (schema: string) => {
    const queues = sql.id(schema, "queues");
    const notifyFunction = sql.id(schema, "notify_queue_changed");
    return [
      sql`CREATE TABLE ${queues} (
  name text PRIMARY KEY CONSTRAINT queues_name_check CHECK (char_length(name) BETWEEN 1 AND 128),
  paused boolean NOT NULL DEFAULT false,
  max_running integer CONSTRAINT queues_max_running_check CHECK (max_running >= 1),
  rate_limit integer CONSTRAINT queues_rate_limit_check CHECK (rate_limit >= 1),
  rate_period_ms integer CONSTRAINT queues_rate_period_ms_check CHECK (rate_period_ms >= 1),
  rate_tokens double precision,
  rate_refilled_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT queues_rate_complete CHECK ((rate_limit IS NULL) = (rate_period_ms IS NULL))
)`,
      sql`CREATE FUNCTION ${notifyFunction}() RETURNS trigger LANGUAGE plpgsql AS $function$
BEGIN
  PERFORM pg_notify(left('stint_jobs_' || TG_TABLE_SCHEMA, 63), NEW.name);
  RETURN NULL;
END
$function$`,
      sql`CREATE TRIGGER queues_notify_changed
  AFTER INSERT OR UPDATE OF paused, max_running, rate_limit, rate_period_ms ON ${queues}
  FOR EACH ROW EXECUTE FUNCTION ${notifyFunction}()`,
    ];
  },
});
