import { sql, type Kysely } from "kysely";

/** Whether a schema exists and the highest migration recorded in it. */
export interface StoredSchemaVersion {
  readonly exists: boolean;
  /** 0 when the schema has no `migrations` table or it is empty. */
  readonly version: number;
}

/**
 * Reads whether `schema` exists and the highest version in its
 * `migrations` table, without failing when either is missing.
 *
 * ### SQL
 * ```sql
 * SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS schema_exists,
 *        to_regclass(format('%I.migrations', $1::text)) IS NOT NULL AS has_migrations;
 * SELECT coalesce(max(version), 0) AS version FROM "stint"."migrations";  -- when it exists
 * ```
 *
 * @example
 * ```ts
 * const { exists, version } = await readSchemaVersion(db, "stint"); // { exists: true, version: 2 }
 * ```
 */
export async function readSchemaVersion(executor: Kysely<any>, schema: string): Promise<StoredSchemaVersion> {
  const { rows } = await sql<{ schema_exists: boolean; has_migrations: boolean }>`SELECT
       EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ${schema}) AS schema_exists,
       to_regclass(format('%I.migrations', ${schema}::text)) IS NOT NULL AS has_migrations`.execute(executor);
  const found = rows[0];
  if (!found?.schema_exists) return Object.freeze({ exists: false, version: 0 });
  if (!found.has_migrations) return Object.freeze({ exists: true, version: 0 });
  const applied = await sql<{ version: number }>`SELECT coalesce(max(version), 0)::integer AS version
  FROM ${sql.id(schema, "migrations")}`.execute(executor);
  return Object.freeze({ exists: true, version: applied.rows[0]?.version ?? 0 });
}
