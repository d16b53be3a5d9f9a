import type { LineParams } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";

/**
 * Lets a serial line that a dead job holds go on (see `lineHoldInsert`):
 * clears the line's `held_by`; the next claim of the queue may start the
 * line's next job. Returns whether the line was held. The dead job stays
 * dead; retrying it later puts it back at the line's head only if nothing
 * of the line has started meanwhile (it keeps its id, which orders it).
 *
 * @example
 * ```ts
 * await releaseLine(db, "stint", { queue: "post-ledger-entry", key: "account:42" });
 * ```
 */
export async function releaseLine(db: Kysely<any>, schema: string, params: LineParams): Promise<boolean> {
  const { rows } = await sql<{ released: boolean }>`UPDATE ${sql.id(schema, "job_groups")} AS g SET held_by = NULL
     WHERE g.queue = ${params.queue} AND g.group_key = ${params.key} AND g.held_by IS NOT NULL
    RETURNING true AS released`.execute(db);
  return rows.length > 0;
}
