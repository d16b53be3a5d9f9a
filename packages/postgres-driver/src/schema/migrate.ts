import { ConfigError } from "@stint/core";
import { applicationName } from "@stint/core/internal";
import { assertSqlIdentifier, integerOption, MAX_BATCH_SIZE } from "@stint/core/driver";
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
import { moveHistory } from "./move-history";

/** Rows per statement when `migrate` moves finished jobs to `finished_jobs`: about a tenth of a second each. */
const HISTORY_BATCH_SIZE = 5_000;

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /** The schema to create or bring up to date. Default `"stint"`. */
  readonly schema?: string;
  /**
   * After the schema migrations, move the finished jobs that are still in
   * `jobs` (written before version 15, or since by workers of an older
   * version) to `finished_jobs`, in batches, while workers keep running.
   * Default true. `false` leaves them where every reader still finds them,
   * for a later `migrate` or the maintenance leader to move.
   */
  readonly moveHistory?: boolean;
  /** Rows per statement of that move, 1 to 100,000. Default 5,000. */
  readonly historyBatchSize?: number;
  /**
   * Called when the move has counted what it has to do, and after every
   * batch: `moved` so far by this run, of about `total` (a count taken at
   * the start, so an estimate: workers of an older version may finish more
   * meanwhile, operators may retry or delete some).
   */
  readonly onHistoryProgress?: (progress: { readonly moved: number; readonly total: number }) => void;
  /** Stops the move between two batches (the schema migrations run to the end); a later `migrate` carries on. */
  readonly signal?: AbortSignal;
}

/** What a {@link migrate} run did. */
export interface MigrateResult {
  readonly schema: string;
  /** Versions applied by this run, in order (empty when already up to date). */
  readonly applied: readonly number[];
  /** The schema's version after the run. */
  readonly version: number;
  /** Finished jobs this run moved from `jobs` to `finished_jobs` (0 with `moveHistory: false`). */
  readonly movedFinishedJobs: number;
  /** `signal` stopped the move before every finished job was moved. */
  readonly interrupted: boolean;
}

/**
 * Creates the schema if needed and applies the migrations it lacks, each in
 * its own transaction that also records it in `<schema>.migrations` (a new
 * schema gets them all in one transaction: with no rows yet, no step holds
 * a lock that another waits for, and a failure leaves nothing behind).
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
 * Then, unless `moveHistory` is false, it moves the finished jobs still in
 * `jobs` to `finished_jobs` (see `moveHistory`): online, a short
 * transaction per batch, resumable — a run that stops leaves the rest for
 * the next one — and reported through `onHistoryProgress`.
 *
 * @example
 * ```ts
 * await migrate(db, { schema: "jobs" });
 * await migrate({ connectionString: process.env.DATABASE_URL! }); // schema "stint"
 * await migrate(db, { onHistoryProgress: ({ moved, total }) => console.log(`moved ${moved} of about ${total}`) });
 * ```
 */
export async function migrate(target: Kysely<any> | DatabaseOptions, options: MigrateOptions = {}): Promise<MigrateResult> {
  const schema = assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema");
  const batchSize = integerOption("historyBatchSize", options.historyBatchSize ?? HISTORY_BATCH_SIZE, 1, MAX_BATCH_SIZE);
  if (isKysely(target)) {
    if (target.isTransaction) {
      throw new ConfigError("db", "migrate needs a Kysely instance, not a transaction: it runs one transaction per migration");
    }
    return migrateAndMove(target, schema, { ...options, historyBatchSize: batchSize });
  }
  const named = "connectionString" in target && target.applicationName === undefined;
  const database = createDatabase(named ? { ...target, applicationName: applicationName("migrate") } : target);
  try {
    return await migrateAndMove(database.db, schema, { ...options, historyBatchSize: batchSize });
  } finally {
    await database.close();
  }
}

async function migrateAndMove(db: Kysely<any>, schema: string, options: MigrateOptions & { readonly historyBatchSize: number }): Promise<MigrateResult> {
  const migrated = await runMigrations(db, schema);
  if (options.moveHistory === false) return Object.freeze({ ...migrated, movedFinishedJobs: 0, interrupted: false });
  try {
    const history = await moveHistory(db, schema, {
      batchSize: options.historyBatchSize,
      ...(options.onHistoryProgress === undefined ? {} : { onProgress: options.onHistoryProgress }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return Object.freeze({ ...migrated, movedFinishedJobs: history.moved, interrupted: history.interrupted });
  } catch (thrown) {
    throw interpretError(thrown, `move the finished jobs of schema "${schema}" to finished_jobs`);
  }
}

async function runMigrations(db: Kysely<any>, schema: string): Promise<Pick<MigrateResult, "schema" | "applied" | "version">> {
  const applied: number[] = [];
  try {
    for (;;) {
      const step = await db.transaction().execute((trx) => applyNext(trx, schema));
      if (step.applied.length === 0) return Object.freeze({ schema, applied: Object.freeze(applied), version: step.version });
      applied.push(...step.applied);
    }
  } catch (thrown) {
    throw interpretError(thrown, `migrate schema "${schema}"`);
  }
}

/** One locked step: the first migration not applied yet (every one, for a new schema), or none when the schema is up to date. */
async function applyNext(trx: Kysely<any>, schema: string): Promise<{ readonly applied: readonly number[]; readonly version: number }> {
  await setApplicationName(applicationName("migrate")).execute(trx);
  await lockMigrations(schema).execute(trx);
  const { rows: found } = await schemaExistsQuery(schema).execute(trx);
  if (found[0]?.exists !== true) await createSchemaStatement(schema).execute(trx);
  await createMigrationsTableStatement(schema).execute(trx);
  const { rows } = await appliedVersionsQuery(schema).execute(trx);
  const done = new Set(rows.map((row) => Number(row.version)));
  const version = Math.max(0, ...done);
  const pending = MIGRATIONS.filter((migration) => !done.has(migration.version));
  const batch = done.size === 0 ? pending : pending.slice(0, 1);
  for (const next of batch) {
    for (const statement of next.statements(schema)) await statement.execute(trx);
    await recordMigrationStatement(schema, next).execute(trx);
  }
  return { applied: batch.map((migration) => migration.version), version: Math.max(version, ...batch.map((migration) => migration.version)) };
}
