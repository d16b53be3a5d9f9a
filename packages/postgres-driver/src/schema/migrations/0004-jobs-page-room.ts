import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 4: `jobs` pages keep half their room free (`fillfactor = 50`,
 * was 75).
 *
 * A job's row is updated at least twice (claim, outcome) and neither update
 * can be HOT: both change `state`, which every partial index names. An
 * update whose new version fits on the row's own page writes one WAL record
 * that leaves out the unchanged leading columns (id, queue, payload); one
 * that does not fit also locks the old version in a record of its own and
 * logs the whole new row. With half of each page free, most updates fit,
 * and page pruning makes the room again once a job is done: a job writes
 * less WAL at 50 than at 75 or 100, with no loss of throughput (see
 * docs/benchmarks.md, Figures behind the code).
 *
 * Only pages filled from now on follow the new setting; the table is not
 * rewritten, so the migration takes no lock worth noticing.
 */
export const jobsPageRoomMigration: Migration = Object.freeze({
  version: 4,
  name: "jobs-page-room",
  statements: (schema: string) => [sql`ALTER TABLE ${sql.id(schema, "jobs")} SET (fillfactor = 50)`],
});
