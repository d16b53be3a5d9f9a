import { sql, type RawBuilder } from "kysely";
import { advisoryLockKey } from "../../advisory-lock-key";
import type { Migration } from "./migration";

/**
 * The key of the transaction-level advisory lock each migration step holds:
 * the first 8 bytes of a SHA-256 of the schema name, as a signed bigint.
 * Two processes migrating one schema take turns; different schemas don't wait.
 *
 * @example
 * ```ts
 * migrationLockKey("stint"); // "-3551…" (stable for a given name)
 * ```
 */
export function migrationLockKey(schema: string): string {
  return advisoryLockKey(`stint:migrate:${schema}`);
}

/**
 * `SELECT pg_advisory_xact_lock($1::bigint)` — waits for other migrations
 * of the schema, and holds them off until the transaction ends. A lock of
 * the transaction, not the session: behind a transaction pooler a session
 * lock would stay with a server connection the pooler hands to others.
 */
export function lockMigrations(schema: string): RawBuilder<unknown> {
  return sql`SELECT pg_advisory_xact_lock(${migrationLockKey(schema)}::bigint)`;
}

/**
 * `SELECT set_config('application_name', $1, true)`: names the migration's
 * connection until the transaction ends (a pooled connection gets its own
 * name back by itself).
 */
export function setApplicationName(name: string): RawBuilder<unknown> {
  return sql`SELECT set_config('application_name', ${name}, true)`;
}

/**
 * `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`. `migrate`
 * creates the schema only when this says it is missing: `CREATE SCHEMA IF
 * NOT EXISTS` needs `CREATE` on the database even when the schema exists,
 * which a migrator role that owns only its schema (see `rolesSql`) lacks.
 */
export function schemaExistsQuery(schema: string): RawBuilder<{ exists: boolean }> {
  return sql<{ exists: boolean }>`SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = ${schema}) AS exists`;
}

/** `CREATE SCHEMA IF NOT EXISTS "<schema>"`. */
export function createSchemaStatement(schema: string): RawBuilder<unknown> {
  return sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(schema)}`;
}

/** Creates `<schema>.migrations`, the record of applied versions, if missing. */
export function createMigrationsTableStatement(schema: string): RawBuilder<unknown> {
  return sql`CREATE TABLE IF NOT EXISTS ${sql.id(schema, "migrations")} (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;
}

/** `SELECT version FROM <schema>.migrations ORDER BY version`. */
export function appliedVersionsQuery(schema: string): RawBuilder<{ version: number }> {
  return sql<{ version: number }>`SELECT version FROM ${sql.id(schema, "migrations")} ORDER BY version`;
}

/** Records a migration as applied (run in the migration's own transaction). */
export function recordMigrationStatement(schema: string, migration: Migration): RawBuilder<unknown> {
  return sql`INSERT INTO ${sql.id(schema, "migrations")} (version, name) VALUES (${sql.lit(migration.version)}, ${sql.lit(migration.name)})`;
}
