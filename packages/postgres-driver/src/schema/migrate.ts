import { applicationName, ConfigError } from "@stint/core";
import { assertSqlIdentifier } from "@stint/core/driver";
import type { Kysely } from "kysely";
import { createDatabase, type DatabaseOptions } from "../create-database";
import { interpretError } from "../interpret-error";
import { isKysely } from "../is-kysely";
import { DEFAULT_SCHEMA } from "./default-schema";
import { MIGRATIONS } from "./migrations/all-migrations";
import {
  appliedVersionsQuery,
  createMigrationsTableStatement,
  createSchemaStatement,
  lockMigrations,
  recordMigrationStatement,
  schemaExistsQuery,
  setApplicationName,
} from "./migrations/migration-bookkeeping";

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /** The schema to create or bring up to date. Default `"stint"`. */
  readonly schema?: string;
}

/** What a {@link migrate} run did. */
export interface MigrateResult {
  readonly schema: string;
  /** Versions applied by this run, in order (empty when already up to date). */
  readonly applied: readonly number[];
  /** The schema's version after the run. */
  readonly version: number;
}

/**
 * Creates the schema if needed and applies the migrations it lacks, each in
 * its own transaction that also records it in `<schema>.migrations`.
 * Idempotent, and safe when several processes migrate at once: each of
 * those transactions first takes a transaction-level advisory lock (keyed
 * on the schema name), then reads which migrations are applied, so the
 * others wait and then find nothing to do. Nothing outlives a transaction,
 * so it works the same behind a transaction pooler.
 *
 * The schema name is validated before any SQL runs. Pass a Kysely instance
 * (not a transaction), or connection options and a pool is opened and closed
 * around the run. While each step runs, the connection's `application_name`
 * is `stint:migrate:<process identity>` (a borrowed pooled connection gets
 * its own name back when the step's transaction ends).
 *
 * @example
 * ```ts
 * await migrate(db, { schema: "jobs" });
 * await migrate({ connectionString: process.env.DATABASE_URL! }); // schema "stint"
 * ```
 */
export async function migrate(target: Kysely<any> | DatabaseOptions, options: MigrateOptions = {}): Promise<MigrateResult> {
  const schema = assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema");
  if (isKysely(target)) {
    if (target.isTransaction) {
      throw new ConfigError("db", "migrate needs a Kysely instance, not a transaction: it runs one transaction per migration");
    }
    return runMigrations(target, schema);
  }
  const named = "connectionString" in target && target.applicationName === undefined;
  const database = createDatabase(named ? { ...target, applicationName: applicationName("migrate") } : target);
  try {
    return await runMigrations(database.db, schema);
  } finally {
    await database.close();
  }
}

async function runMigrations(db: Kysely<any>, schema: string): Promise<MigrateResult> {
  const applied: number[] = [];
  try {
    for (;;) {
      const step = await db.transaction().execute((trx) => applyNext(trx, schema));
      if (step.applied === undefined) return Object.freeze({ schema, applied: Object.freeze(applied), version: step.version });
      applied.push(step.applied);
    }
  } catch (thrown) {
    throw interpretError(thrown, `migrate schema "${schema}"`);
  }
}

/** One locked step: the first migration not applied yet, or none when the schema is up to date. */
async function applyNext(trx: Kysely<any>, schema: string): Promise<{ readonly applied?: number; readonly version: number }> {
  await setApplicationName(applicationName("migrate")).execute(trx);
  await lockMigrations(schema).execute(trx);
  const { rows: found } = await schemaExistsQuery(schema).execute(trx);
  if (found[0]?.exists !== true) await createSchemaStatement(schema).execute(trx);
  await createMigrationsTableStatement(schema).execute(trx);
  const { rows } = await appliedVersionsQuery(schema).execute(trx);
  const done = new Set(rows.map((row) => Number(row.version)));
  const version = Math.max(0, ...done);
  const next = MIGRATIONS.find((migration) => !done.has(migration.version));
  if (next === undefined) return { version };
  for (const statement of next.statements(schema)) await statement.execute(trx);
  await recordMigrationStatement(schema, next).execute(trx);
  return { applied: next.version, version: Math.max(version, next.version) };
}
