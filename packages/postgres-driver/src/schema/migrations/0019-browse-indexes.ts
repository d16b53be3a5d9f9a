import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 19: the indexes the dashboard's filters read, so that a filter
 * finds its rows among millions without walking them.
 *
 * - `finished_jobs_queue_idx` on `(queue, state, id)`, a partitioned index
 *   (each partition gets its own): the finished jobs of a queue in one
 *   state, newest first, as one index range. The history is written once
 *   per job, when a finished job moves, so the hot table pays nothing.
 * - `jobs_last_error_trgm_idx` and `finished_jobs_last_error_trgm_idx`,
 *   GIN trigram indexes (`pg_trgm`) on `last_error`, partial on
 *   `last_error IS NOT NULL`: a search for a text in the last error reads
 *   the rows that contain its trigrams, not the whole history. Only jobs
 *   that failed at least once are in them.
 *
 * `pg_trgm` is a trusted extension (PostgreSQL 13 and later): a role with
 * `CREATE` on the database can install it. Where it cannot — no right, or
 * the extension is not shipped — the migration still succeeds without the
 * two trigram indexes, with a notice, and the dashboard searches the error
 * text within a bounded window instead, saying what it covered. Creating
 * the extension and the indexes later by hand (the statements are in
 * docs/schema.md) turns the indexed search on.
 */
export const browseIndexesMigration: Migration = Object.freeze({
  version: 19,
  name: "browse-indexes",
  statements: (schema: string) => [
    sql`CREATE INDEX finished_jobs_queue_idx ON ${sql.id(schema, "finished_jobs")} (queue, state, id)`,
    sql`DO $migration$
DECLARE
  trgm_schema name;
BEGIN
  BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
  EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'pg_trgm is not available (%): the error-text filter will search a bounded window', SQLERRM;
  END;
  SELECT n.nspname INTO trgm_schema
    FROM pg_catalog.pg_opclass AS c
    JOIN pg_catalog.pg_namespace AS n ON n.oid = c.opcnamespace
    JOIN pg_catalog.pg_am AS a ON a.oid = c.opcmethod
   WHERE c.opcname = 'gin_trgm_ops' AND a.amname = 'gin'
   LIMIT 1;
  IF trgm_schema IS NULL THEN
    RETURN;
  END IF;
  EXECUTE format('CREATE INDEX jobs_last_error_trgm_idx ON %I.jobs USING gin (last_error %I.gin_trgm_ops) WHERE last_error IS NOT NULL',
                 ${sql.lit(schema)}, trgm_schema);
  EXECUTE format('CREATE INDEX finished_jobs_last_error_trgm_idx ON %I.finished_jobs USING gin (last_error %I.gin_trgm_ops) WHERE last_error IS NOT NULL',
                 ${sql.lit(schema)}, trgm_schema);
END
$migration$`,
  ],
});
