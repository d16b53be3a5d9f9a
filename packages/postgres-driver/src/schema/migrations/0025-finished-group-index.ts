import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 25: `finished_jobs_group_idx` on `(queue, group_key, state, id)`,
 * partial on grouped jobs (`group_key <> ''`), a partitioned index (each
 * partition gets its own): the finished jobs of one group or serial line
 * of a queue, in one state, newest first, as one index range. Without it,
 * a page of a rare group's jobs walks the queue's whole history by id (see
 * docs/benchmarks.md). The history is written once per
 * job, and only grouped jobs enter this index, so neither the hot table
 * nor a queue without groups pays for it.
 */
export const finishedGroupIndexMigration: Migration = Object.freeze({
  version: 25,
  name: "finished-group-index",
  statements: (schema: string) => [
    sql`CREATE INDEX finished_jobs_group_idx ON ${sql.id(schema, "finished_jobs")} (queue, group_key, state, id) WHERE group_key <> ''`,
  ],
});
