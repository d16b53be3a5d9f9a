import { sql } from "kysely";
import type { Migration } from "./migration";

/** The SQLSTATE `controls_apply` raises: the claim sent without the controls must be sent with them. */
export const CONTROLS_APPLY_SQLSTATE = "SQ901";

/**
 * Version 11: `controls_apply(queue)`, which raises `SQ901`. A claim of a
 * queue that had no controls at its last claim is sent without the
 * controls' machinery (see `claimBatch`): it only checks, in the same
 * statement and snapshot, that the queue's `queues` row still holds none,
 * and calls this function when one does. The error aborts the statement
 * before it changes anything, and the claim is sent again with the
 * controls. A function and nothing else: no table changes.
 */
export const claimWithoutControlsMigration: Migration = Object.freeze({
  version: 11,
  name: "claim-without-controls",
  statements: (schema: string) => [
    sql`CREATE FUNCTION ${sql.id(schema, "controls_apply")}(queue_name text) RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION 'queue % has controls: claim it with them', queue_name USING ERRCODE = '${sql.raw(CONTROLS_APPLY_SQLSTATE)}';
END
$$`,
  ],
});
