import { sql } from "kysely";
import type { Migration } from "./migration";

/** Most job ids one notification names: 300 ids of up to 19 digits and a comma stay under NOTIFY's 8000-byte payload. */
export const IDS_PER_NOTIFICATION = 300;

/**
 * Version 8: completion hints for `client.waitFor`.
 *
 * - `job_waiters` — one row per job a listening connection waits for
 *   (`waiter` names the connection's source). UNLOGGED: it is as
 *   short-lived as the waits, and a crash that empties it only makes
 *   waiters register again when they reconnect. No foreign key, so the
 *   jobs table's hot updates never check it; retention deletes a job's
 *   rows with the job.
 * - `notify_awaited(channel, finished)` — called by every statement that
 *   finishes jobs (success, dead, cancel, the lease rescue's dead), after
 *   its update: sends the ids of the finished jobs somebody waits for on
 *   `channel`, comma-separated, at most 300 per notification, and returns
 *   how many it named. Nobody waiting costs a statement one look at
 *   `job_waiters` (see docs/benchmarks.md, Figures behind the code) and no NOTIFY: a NOTIFY
 *   takes a database-wide lock until its transaction commits. Its query runs on a snapshot taken after the caller's
 *   update, not at the caller's start, so a waiter registered while the
 *   statement ran is seen — see `PostgresCompletionSource` for why that
 *   closes the race.
 */
export const jobWaitersMigration: Migration = Object.freeze({
  version: 8,
  name: "job-waiters",
  statements: (schema: string) => {
    const waiters = sql.id(schema, "job_waiters");
    return [
      sql`CREATE UNLOGGED TABLE ${waiters} (
  job_id bigint NOT NULL,
  waiter text NOT NULL CONSTRAINT job_waiters_waiter_check CHECK (char_length(waiter) BETWEEN 1 AND 200),
  since timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, waiter)
)`,
      sql`CREATE FUNCTION ${sql.id(schema, "notify_awaited")}(channel text, finished bigint[]) RETURNS integer
LANGUAGE plpgsql VOLATILE STRICT AS $function$
DECLARE
  chunk record;
  named integer := 0;
BEGIN
  -- The common case, nobody waiting for these jobs, in one index probe per id.
  IF NOT EXISTS (SELECT FROM ${waiters} AS w WHERE w.job_id = ANY(finished)) THEN
    RETURN 0;
  END IF;
  FOR chunk IN
    SELECT string_agg(numbered.job_id::text, ',') AS ids, count(*)::integer AS n
      FROM (SELECT awaited.job_id, (row_number() OVER () - 1) / ${sql.lit(IDS_PER_NOTIFICATION)} AS part
              FROM (SELECT DISTINCT w.job_id FROM ${waiters} AS w WHERE w.job_id = ANY(finished)) AS awaited) AS numbered
     GROUP BY numbered.part
  LOOP
    PERFORM pg_notify(channel, chunk.ids);
    named := named + chunk.n;
  END LOOP;
  RETURN named;
END
$function$`,
    ];
  },
});
