import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 12: the wake-up on insert becomes a row trigger.
 * `jobs_notify_inserted` (same name, so `diagnose` still finds it) fires
 * `AFTER INSERT … FOR EACH ROW WHEN (NEW.run_at <= now())`, and
 * `notify_jobs_inserted()` sends `pg_notify(<channel>, NEW.queue)` as a
 * plain expression, which PL/pgSQL evaluates without starting a query.
 * PostgreSQL sends each distinct (channel, queue) of a transaction once,
 * at commit, as the statement trigger did.
 *
 * The statement trigger (migration 2) read its transition table with a
 * query on every insert, a cost every single-job enqueue paid. The row
 * trigger costs a bulk insert a little more per row, which a bulk
 * enqueue's other work dwarfs (see docs/benchmarks.md, Figures behind the
 * code).
 */
export const rowWakeupTriggerMigration: Migration = Object.freeze({
  version: 12,
  name: "row-wakeup-trigger",
  statements: (schema: string) => {
    const jobs = sql.id(schema, "jobs");
    const notifyFunction = sql.id(schema, "notify_jobs_inserted");
    return [
      sql`DROP TRIGGER jobs_notify_inserted ON ${jobs}`,
      sql`CREATE OR REPLACE FUNCTION ${notifyFunction}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- An expression, not PERFORM: PL/pgSQL evaluates a simple expression without the executor a query needs.
  IF pg_notify(left('stint_jobs_' || TG_TABLE_SCHEMA, 63), NEW.queue) IS NULL THEN
    NULL;
  END IF;
  RETURN NULL;
END
$$`,
      sql`CREATE TRIGGER jobs_notify_inserted
  AFTER INSERT ON ${jobs}
  FOR EACH ROW WHEN (NEW.run_at <= now())
  EXECUTE FUNCTION ${notifyFunction}()`,
    ];
  },
});
