import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 10: `jobs_finished_idx` carries each dead or cancelled job's
 * queue (`INCLUDE (queue)`), so counting them per queue — the dashboard's
 * overview and the metrics scrape's dead gauge — is an index-only scan
 * instead of a heap visit per dead job, which on a large table is the
 * difference between reading most of its pages and a few (see
 * docs/benchmarks.md, Figures behind the code). The index holds the same rows as before (dead and cancelled
 * only), so no completion writes to it; the rebuild reads the table once.
 */
export const finishedIndexQueueMigration: Migration = Object.freeze({
  version: 10,
  name: "finished-index-queue",
  statements: (schema: string) => {
    const jobs = sql.id(schema, "jobs");
    return [
      sql`DROP INDEX ${sql.id(schema, "jobs_finished_idx")}`,
      sql`CREATE INDEX jobs_finished_idx ON ${jobs} (state, finished_at) INCLUDE (queue)
  WHERE state IN ('dead', 'cancelled')`,
    ];
  },
});
