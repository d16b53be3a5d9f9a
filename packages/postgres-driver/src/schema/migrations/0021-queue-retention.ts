import { sql } from "kysely";
import type { Migration } from "./migration";

/**
 * Version 21: a retention of its own per queue.
 *
 * - `queues.succeeded_days`, `dead_days`, `cancelled_days` — how many days
 *   the queue keeps its finished jobs of each state, in place of the
 *   retention pruner's global setting (`NULL`: the global one). The claim
 *   never reads them: a row that sets only these is a queue without
 *   controls to `claim_room` and the claim.
 * - `detach_history_partition(day, doomed, kept_queues)` — version 15's
 *   detach, which also puts back the rows of `kept_queues` in the doomed
 *   states (queues that keep them longer than the pass's cutoff), through
 *   the partition's copy of `finished_jobs_queue_idx`, into
 *   `finished_jobs_kept`: as the rows of states a pass does not delete
 *   already are. Version 15's two-argument function stays for processes
 *   of earlier versions.
 */
export const queueRetentionMigration: Migration = Object.freeze({
  version: 21,
  name: "queue-retention",
  statements: (schema: string) => {
    const days = (column: string) =>
      sql`ADD COLUMN ${sql.id(column)} integer CONSTRAINT ${sql.id(`queues_${column}_check`)} CHECK (${sql.id(column)} BETWEEN 0 AND 36500)`;
    return [
      sql`ALTER TABLE ${sql.id(schema, "queues")} ${days("succeeded_days")}, ${days("dead_days")}, ${days("cancelled_days")}`,
      sql`CREATE FUNCTION ${sql.id(schema, "detach_history_partition")}(day date, doomed text[], kept_queues text[]) RETURNS integer
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $function$
DECLARE
  part text := 'finished_jobs_' || to_char(day, 'YYYYMMDD');
  kept integer;
  more integer;
BEGIN
  kept := ${sql.id(schema, "detach_history_partition")}(day, doomed);
  IF kept IS NULL OR cardinality(kept_queues) = 0 THEN
    RETURN kept;
  END IF;
  EXECUTE format('INSERT INTO %I.finished_jobs SELECT * FROM %I.%I WHERE queue = ANY($1) AND state = ANY($2)',
                 ${sql.lit(schema)}, ${sql.lit(schema)}, part) USING kept_queues, doomed;
  GET DIAGNOSTICS more = ROW_COUNT;
  RETURN kept + more;
END
$function$`,
    ];
  },
});
