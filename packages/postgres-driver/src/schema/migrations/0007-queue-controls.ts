import { sql } from "kysely";
import type { Migration } from "./migration";

/** How soon a claim held back by a full running cap asks again (another worker's job may have finished by then). */
export const CAP_RETRY_MS = 200;

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
 * - `claim_room(queue, wanted)` — called by every claim, in the claim's own
 *   statement: how many jobs it may take. A queue without controls costs a
 *   primary-key lookup. Otherwise it locks the queue's row, so claims of
 *   the queue take turns, and its queries run on snapshots taken after the
 *   lock (a function's statements each take their own), so the count of
 *   running jobs includes what the previous claimer committed: two workers
 *   can't both take the last free slot. It spends the rate limit's tokens
 *   on what can be claimed now (due jobs, at most `wanted`), and says when
 *   asking again may give more.
 */
export const queueControlsMigration: Migration = Object.freeze({
  version: 7,
  name: "queue-controls",
  statements: (schema: string) => {
    const queues = sql.id(schema, "queues");
    const jobs = sql.id(schema, "jobs");
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
      sql`CREATE FUNCTION ${sql.id(schema, "claim_room")}(queue_name text, wanted integer,
  OUT room integer, OUT paused boolean, OUT retry_after_ms integer)
LANGUAGE plpgsql AS $function$
DECLARE
  controls record;
  running bigint;
  due bigint;
  tokens double precision;
  burst double precision;
  spent integer;
BEGIN
  room := wanted;
  paused := false;
  retry_after_ms := NULL;
  PERFORM FROM ${queues} AS q WHERE q.name = queue_name AND (q.paused OR q.max_running IS NOT NULL OR q.rate_limit IS NOT NULL);
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT * INTO controls FROM ${queues} AS q WHERE q.name = queue_name FOR UPDATE;
  IF controls.paused THEN
    room := 0;
    paused := true;
    RETURN;
  END IF;
  -- Held back: fewer may start than are due and wanted; the claim then says when asking again may give more.
  IF controls.max_running IS NOT NULL THEN
    SELECT count(*) INTO running FROM (
      SELECT FROM ${jobs} AS j WHERE j.queue = queue_name AND j.state = 'running' LIMIT controls.max_running) AS r;
    room := least(room, controls.max_running - running);
  END IF;
  IF controls.rate_limit IS NOT NULL THEN
    burst := greatest(1, least(controls.rate_limit, floor(controls.rate_limit * 100.0 / controls.rate_period_ms)));
    tokens := least(burst, coalesce(controls.rate_tokens, burst)
      + greatest(0, extract(epoch FROM now() - coalesce(controls.rate_refilled_at, now())) * 1000) * controls.rate_limit / controls.rate_period_ms);
    room := least(room, floor(tokens)::integer);
  END IF;
  IF room < wanted THEN
    -- Due jobs beyond what may start now (counted only when held back, and at most one more than may start).
    SELECT count(*) INTO due FROM (
      SELECT FROM ${jobs} AS j WHERE j.queue = queue_name AND j.state IN ('queued', 'failed') AND j.run_at <= now() LIMIT room + 1) AS d;
    IF due > room THEN
      IF controls.max_running IS NOT NULL AND room = controls.max_running - running THEN
        retry_after_ms := ${sql.lit(CAP_RETRY_MS)};
      END IF;
      IF controls.rate_limit IS NOT NULL AND room = floor(tokens) THEN
        retry_after_ms := greatest(coalesce(retry_after_ms, 0),
          ceil((1 - (tokens - floor(tokens))) * controls.rate_period_ms / controls.rate_limit)::integer, 1);
      END IF;
    END IF;
  ELSE
    due := wanted;
  END IF;
  IF controls.rate_limit IS NOT NULL THEN
    spent := least(room, due);
    UPDATE ${queues} AS q SET rate_tokens = tokens - spent, rate_refilled_at = now() WHERE q.name = queue_name;
  END IF;
END
$function$`,
    ];
  },
});
