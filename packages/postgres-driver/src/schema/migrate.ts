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
  resetApplicationName,
  schemaExistsQuery,
  setApplicationName,
  unlockMigrations,
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
 * Idempotent, and safe when several processes migrate at once: the whole run
 * holds a session-level advisory lock (keyed on the schema name) on one
 * dedicated connection, so the others wait and then find nothing to do.
 *
 * The schema name is validated before any SQL runs. Pass a Kysely instance
 * (not a transaction), or connection options and a pool is opened and closed
 * around the run. While it runs, the connection's `application_name` is
 * `stint:migrate:<process identity>` (a borrowed pooled connection gets its
 * own name back afterwards).
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
      throw new ConfigError("db", "migrate needs a Kysely instance, not a transaction: it runs its own transactions");
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
  try {
    return await db.connection().execute(async (connection) => {
      await setApplicationName(applicationName("migrate")).execute(connection);
      // A broken connection ends the session, its lock and its name with it,
      // so a failed unlock or reset only matters when nothing else went wrong.
      let failure: unknown;
      const unlessFailed = (cleanupError: unknown): void => {
        if (failure === undefined) throw cleanupError;
      };
      try {
        await lockMigrations(schema).execute(connection);
        try {
          return await applyPending(connection, schema);
        } catch (thrown) {
          failure = thrown;
          throw thrown;
        } finally {
          await unlockMigrations(schema).execute(connection).catch(unlessFailed);
        }
      } catch (thrown) {
        failure ??= thrown;
        throw thrown;
      } finally {
        await resetApplicationName().execute(connection).catch(unlessFailed);
      }
    });
  } catch (thrown) {
    throw interpretError(thrown, `migrate schema "${schema}"`);
  }
}

async function applyPending(connection: Kysely<any>, schema: string): Promise<MigrateResult> {
  const { rows: found } = await schemaExistsQuery(schema).execute(connection);
  if (found[0]?.exists !== true) await createSchemaStatement(schema).execute(connection);
  await createMigrationsTableStatement(schema).execute(connection);
  const { rows } = await appliedVersionsQuery(schema).execute(connection);
  const done = new Set(rows.map((row) => Number(row.version)));
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
    if (done.has(migration.version)) continue;
    await connection.transaction().execute(async (trx) => {
      for (const statement of migration.statements(schema)) await statement.execute(trx);
      await recordMigrationStatement(schema, migration).execute(trx);
    });
    applied.push(migration.version);
    done.add(migration.version);
  }
  return Object.freeze({ schema, applied: Object.freeze(applied), version: Math.max(0, ...done) });
}
