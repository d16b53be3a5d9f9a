import type { Kysely } from "kysely";
import { MIGRATIONS } from "../../src";
import { createMigrationsTableStatement, createSchemaStatement, recordMigrationStatement } from "../../src/schema/migrations/migration-bookkeeping";

/**
 * Brings `schema` to `version` the way `migrate` would have at the time, so
 * a test can write rows a migration then has to carry over.
 *
 * @example
 * ```ts
 * await migrateTo(db, schema, 12);
 * ```
 */
export async function migrateTo(db: Kysely<any>, schema: string, version: number): Promise<void> {
  await createSchemaStatement(schema).execute(db);
  await createMigrationsTableStatement(schema).execute(db);
  for (const migration of MIGRATIONS.filter((m) => m.version <= version)) {
    await db.transaction().execute(async (trx) => {
      for (const statement of migration.statements(schema)) await statement.execute(trx);
      await recordMigrationStatement(schema, migration).execute(trx);
    });
  }
}
