import { randomBytes } from "node:crypto";
import { ConfigError } from "@stint/core";
import type { Kysely } from "kysely";
import type { StatementRunner } from "../connection/statement-runner";
import { createDatabase } from "../create-database";
import { PostgresJobStore } from "../postgres-job-store";
import { dropSchema } from "../schema/drop-schema";
import { migrate } from "../schema/migrate";

/** Options of {@link createTestSchema}. */
export interface TestSchemaOptions {
  /** Default `process.env.DATABASE_URL`. */
  readonly connectionString?: string;
  /** Start of the random schema name. Default `"stint_test"`. */
  readonly prefix?: string;
  /** Size of the schema's pool. Default 20 (enough for tests that race 16 connections). */
  readonly maxConnections?: number;
  /** `statement_timeout` of the pool in ms. Default 30 000. */
  readonly statementTimeoutMs?: number;
  /** Called when an idle pooled connection fails; default: a process warning. */
  readonly onPoolError?: (error: Error) => void;
}

/** A freshly migrated schema of its own, and a store over it. */
export interface TestSchema extends AsyncDisposable {
  readonly db: Kysely<any>;
  /** The statement runner of `db`'s pool, which `store` sends its hot statements to. */
  readonly statements: StatementRunner;
  readonly store: PostgresJobStore;
  readonly schema: string;
  readonly connectionString: string;
  /**
   * The `application_name` of the schema's connections: the schema name, so
   * a test can find (or terminate) its own connections in `pg_stat_activity`
   * without touching those of tests running elsewhere on the same database.
   */
  readonly applicationName: string;
  /** Drops the schema and closes the pool. Idempotent. */
  drop(): Promise<void>;
}

/**
 * Creates a schema with a random name (`stint_test_<random>`), migrates it
 * and returns a store over it, so that tests run in parallel against one
 * database without seeing each other's jobs. Call `drop()` when done.
 *
 * @example
 * ```ts
 * let test: TestSchema;
 * before(async () => { test = await createTestSchema(); });
 * after(() => test.drop());
 * it("enqueues", async () => { await test.store.enqueue(job); });
 * ```
 */
export async function createTestSchema(options: TestSchemaOptions = {}): Promise<TestSchema> {
  const connectionString = options.connectionString ?? process.env["DATABASE_URL"];
  if (connectionString === undefined || connectionString === "") {
    throw new ConfigError(
      "connectionString",
      "no database to test against: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres) or pass connectionString",
    );
  }
  const prefix = options.prefix ?? "stint_test";
  const schema = `${prefix}_${randomBytes(6).toString("hex")}`;
  const database = createDatabase({
    connectionString,
    maxConnections: options.maxConnections ?? 20,
    statementTimeoutMs: options.statementTimeoutMs ?? 30_000,
    applicationName: schema,
    ...(options.onPoolError === undefined ? {} : { onPoolError: options.onPoolError }),
  });
  try {
    await migrate(database.db, { schema });
  } catch (thrown) {
    await dropSchema(database.db, schema).catch(() => undefined);
    await database.close();
    throw thrown;
  }
  const store = new PostgresJobStore({ db: database.db, statements: database.statements, schema });
  let dropping: Promise<void> | undefined;
  const drop = (): Promise<void> => {
    dropping ??= dropSchema(database.db, schema).finally(() => database.close());
    return dropping;
  };
  return Object.freeze({
    db: database.db,
    statements: database.statements,
    store,
    schema,
    connectionString,
    applicationName: schema,
    drop,
    [Symbol.asyncDispose]: drop,
  });
}
