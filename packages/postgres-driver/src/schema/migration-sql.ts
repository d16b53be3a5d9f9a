import { assertSqlIdentifier } from "@stint/core/driver";
import type { RawBuilder } from "kysely";
import { COMPILE_ONLY } from "../compile-only";
import { DEFAULT_SCHEMA } from "./default-schema";
import { MIGRATIONS } from "./migrations/all-migrations";
import { createMigrationsTableStatement, createSchemaStatement, recordMigrationStatement } from "./migrations/migration-bookkeeping";

/**
 * The SQL text of every migration for a schema, as a script a DBA can read
 * or run by hand (`psql -f`): the schema and the `migrations` table, then
 * each migration in its own transaction with the row that records it.
 * Unlike {@link migrate} it takes no lock and does not skip applied versions.
 *
 * @example
 * ```ts
 * process.stdout.write(migrationSql("stint"));
 * // CREATE SCHEMA IF NOT EXISTS "stint";
 * // …
 * // BEGIN;
 * // CREATE TABLE "stint"."jobs" ( … );
 * ```
 */
export function migrationSql(schema: string = DEFAULT_SCHEMA, fromVersion = 1): string {
  assertSqlIdentifier(schema, "schema");
  const parts = [
    `-- stint schema "${schema}", migrations ${fromVersion} to ${MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0}`,
    statementText(createSchemaStatement(schema)),
    statementText(createMigrationsTableStatement(schema)),
  ];
  for (const migration of MIGRATIONS) {
    if (migration.version < fromVersion) continue;
    parts.push(
      `\n-- ${migration.version}: ${migration.name}\nBEGIN;`,
      ...migration.statements(schema).map(statementText),
      statementText(recordMigrationStatement(schema, migration)),
      "COMMIT;",
    );
  }
  return `${parts.join("\n")}\n`;
}

function statementText(statement: RawBuilder<unknown>): string {
  const compiled = statement.compile(COMPILE_ONLY);
  if (compiled.parameters.length > 0) {
    throw new Error(`a migration statement must not take parameters: ${compiled.sql}`);
  }
  return `${compiled.sql};`;
}
