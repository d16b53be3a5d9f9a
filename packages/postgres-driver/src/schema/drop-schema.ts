import { assertSqlIdentifier } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";

/**
 * Drops a schema and everything in it (`DROP SCHEMA IF EXISTS … CASCADE`).
 * For tests and teardown scripts; the name is validated first.
 *
 * @example
 * ```ts
 * await dropSchema(db, "stint_test_k2j4");
 * ```
 */
export async function dropSchema(db: Kysely<any>, schema: string): Promise<void> {
  assertSqlIdentifier(schema, "schema");
  // The drop locks every table of the schema in turn; a statement still running on several of them (a worker's
  // backend finishing after its process was killed, say) can deadlock with it, and PostgreSQL then cancels one of the
  // two. The drop is the one to try again: the other is gone a moment later.
  for (let tries = 1; ; tries += 1) {
    try {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
      return;
    } catch (thrown) {
      if (tries >= DROP_TRIES || (thrown as { code?: unknown }).code !== DEADLOCK_DETECTED) throw thrown;
    }
  }
}

/** SQLSTATE `deadlock_detected`. */
const DEADLOCK_DETECTED = "40P01";

/** How many times {@link dropSchema} runs the drop when it deadlocks. */
const DROP_TRIES = 3;
