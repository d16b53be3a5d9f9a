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
  await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(db);
}
