import { sql } from "kysely";
import type { Migration } from "./migration";

/** Most events of one kind and queue that one statement lists; above it, one summary notification says how many. */
export const MAX_LISTED_EVENTS = 1000;

/** Bytes of listed events per notification; with its header (a queue name cut to 200 characters) it stays under NOTIFY's 8000-byte payload. */
export const EVENT_BYTES_PER_NOTIFICATION = 6000;

/** Largest progress value (its JSON text, in bytes) an event carries; larger ones are left out. */
export const MAX_EVENT_DETAIL_BYTES = 256;

/**
 * Version 17: job events across processes.
 *
 * - `job_event_listeners` — one row per process that subscribes to job
 *   events (`listener` names its LISTEN connection), with the queues and
 *   event kinds it wants (`NULL`: all) and when the row lapses unless
 *   refreshed. UNLOGGED and tiny: a crash that empties it only makes
 *   listeners register again, which they do when they reconnect.
 * - `notify_job_events(channel, kinds, ids, queues, attempts, details)` — called by
 *   every statement that changes a job's state, with one array element per
 *   changed job (a `NULL` kind is skipped), once the statement's own look
 *   at the listeners table found a live row (see `notifyJobEvents`): with
 *   nobody listening there is no call and no NOTIFY. Called anyway, it
 *   returns at once when no live row exists.
 *   Otherwise it sends the events some listener wants on `channel`
 *   (`stint_events_<schema>`), grouped by kind and queue, as JSON:
 *   `{"k":"started","q":"emails","t":<epoch ms>,"j":[["812",1],…]}` with at
 *   most 6,000 bytes of entries per notification; more than 1,000 events
 *   of one kind and queue in one statement become one summary,
 *   `{"k":…,"q":…,"t":…,"n":5000}`. An entry is `[id, attempt]` or
 *   `[id, attempt, detail]` (a failure's error code, a progress value of
 *   at most 256 bytes). NOTIFY delivers at commit, and nothing on rollback.
 */
export const jobEventsMigration: Migration = Object.freeze({
  version: 17,
  name: "job-events",
  statements: (schema: string) => {
    const listeners = sql.id(schema, "job_event_listeners");
    const live = sql`l.expires_at > now()`;
    return [
      sql`CREATE UNLOGGED TABLE ${listeners} (
  listener text PRIMARY KEY CONSTRAINT job_event_listeners_listener_check CHECK (char_length(listener) BETWEEN 1 AND 200),
  queues text[],
  kinds text[],
  expires_at timestamptz NOT NULL
)`,
      sql`CREATE FUNCTION ${sql.id(schema, "notify_job_events")}(channel text, kinds text[], ids bigint[], queues text[], attempts integer[], details jsonb[])
RETURNS integer LANGUAGE plpgsql VOLATILE AS $function$
DECLARE
  chunk record;
  sent integer := 0;
  at_ms text;
BEGIN
  -- The common case, nobody listening, in one look at a tiny table.
  IF ids IS NULL OR NOT EXISTS (SELECT FROM ${listeners} AS l WHERE ${live}) THEN
    RETURN 0;
  END IF;
  at_ms := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint::text;
  FOR chunk IN
    WITH wanted AS (
      SELECT e.kind, e.queue, e.ord,
             '["' || e.id::text || '",' || coalesce(e.attempt, 0)::text
               || CASE WHEN e.detail IS NULL OR octet_length(e.detail::text) > ${sql.lit(MAX_EVENT_DETAIL_BYTES)} THEN '' ELSE ',' || e.detail::text END
               || ']' AS entry
        FROM unnest(kinds, ids, queues, attempts, details) WITH ORDINALITY AS e(kind, id, queue, attempt, detail, ord)
       WHERE e.kind IS NOT NULL AND e.id IS NOT NULL AND e.queue IS NOT NULL
         AND EXISTS (SELECT FROM ${listeners} AS l
                      WHERE ${live} AND (l.queues IS NULL OR e.queue = ANY(l.queues)) AND (l.kinds IS NULL OR e.kind = ANY(l.kinds)))
    ),
    parted AS (
      SELECT w.*, count(*) OVER (PARTITION BY w.kind, w.queue) AS n,
             (sum(octet_length(w.entry) + 1) OVER (PARTITION BY w.kind, w.queue ORDER BY w.ord) - 1)::bigint
               / ${sql.lit(EVENT_BYTES_PER_NOTIFICATION)} AS part
        FROM wanted AS w
    )
    SELECT p.kind, p.queue, max(p.n) AS n,
           CASE WHEN max(p.n) > ${sql.lit(MAX_LISTED_EVENTS)} THEN NULL ELSE string_agg(p.entry, ',' ORDER BY p.ord) END AS entries
      FROM parted AS p
     GROUP BY p.kind, p.queue, CASE WHEN p.n > ${sql.lit(MAX_LISTED_EVENTS)} THEN -1 ELSE p.part END
  LOOP
    PERFORM pg_notify(channel,
      '{"k":' || to_json(chunk.kind)::text || ',"q":' || to_json(left(chunk.queue, 200))::text || ',"t":' || at_ms
        || CASE WHEN chunk.entries IS NULL THEN ',"n":' || chunk.n::text ELSE ',"j":[' || chunk.entries || ']' END || '}');
    sent := sent + 1;
  END LOOP;
  RETURN sent;
END
$function$`,
    ];
  },
});
