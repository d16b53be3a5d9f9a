import { sql } from "kysely";
import { enqueueFunctionStatement } from "./enqueue-function-statement";
import type { Migration } from "./migration";

/**
 * Version 16: `enqueue(queue, payload, …)`, a SQL function that enqueues a
 * job as `JobClient.enqueue` does, for producers that are not Node.js
 * (psql, Python, Go, a trigger, a migration) and for the transactional
 * outbox: called inside a transaction, the job exists if and only if that
 * transaction commits. It returns the job's id, or the id of the active job
 * that holds its dedupe key.
 *
 * It refuses what the library refuses, each with SQLSTATE 22023
 * (`invalid_parameter_value`), a message that starts with the parameter's
 * name and the parameter in the error's `COLUMN` field: queue names,
 * priority, attempts, time limit, run time, delay, dedupe key and mode,
 * payload and meta (depth, size). The limits are written out here, as a
 * migration keeps its own literals; a test holds them to `@stint/core`'s.
 * Sizes count the JSON text PostgreSQL writes for the value without the
 * spaces it puts after `:` and `,`, which is the text `JSON.stringify`
 * writes for a value of plain integers and strings.
 *
 * `SECURITY INVOKER`: it does nothing its caller could not do with an
 * `INSERT` into `jobs`, so it needs (and grants) no more than that — the
 * runtime role of `rolesSql` has it. The insert fires `jobs_notify_inserted`,
 * so listening workers wake at commit as for any enqueue.
 */
export const enqueueFunctionMigration: Migration = Object.freeze({
  version: 16,
  name: "enqueue-function",
  statements: (schema: string) => {
    const enqueue = sql.id(schema, "enqueue");
    return [
      enqueueFunctionStatement(schema, { events: false }),
      sql`COMMENT ON FUNCTION ${enqueue}(text, jsonb, timestamptz, interval, integer, integer, interval, text, text, jsonb, integer) IS
'Enqueues a job as the stint library does and returns its id (or the id of the active job holding its dedupe key). See docs/enqueue-from-sql.md.'`,
    ];
  },
});
