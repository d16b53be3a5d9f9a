import { assertSqlIdentifier, ConfigError, integerOption, JOB_STORE, rejectUnknownOptions } from "@stint/core";
import type { Kysely } from "kysely";
import type { DependencyContainer } from "tsyringe";
import { createDatabase, type DatabaseConnection, type DatabaseHandle, type PoolSettings } from "./create-database";
import { PostgresJobStore } from "./postgres-job-store";
import { POSTGRES_DB } from "./postgres-db-token";
import { DEFAULT_SCHEMA } from "./schema/default-schema";

/** Settings of {@link registerPostgresDriver} besides where the database is. */
export interface PostgresDriverOptions extends PoolSettings {
  /** The schema `migrate` created. Default `"stint"`. */
  readonly schema?: string;
  /**
   * Size of a second, separate pool used only for lease extensions and
   * finalizes, so that busy handlers cannot starve the heartbeat. Created
   * only from a connection string; `0` turns it off. Default 2.
   */
  readonly controlConnections?: number;
  /** `statement_timeout` of the control pool in ms (keep it well below the lease). Default 10 000. */
  readonly controlStatementTimeoutMs?: number;
  /** Called when an idle pooled connection fails; see `createDatabase`. */
  readonly onPoolError?: (error: Error) => void;
}

/** What {@link registerPostgresDriver} registered, and how to close it. */
export interface PostgresDriverHandle extends AsyncDisposable {
  readonly store: PostgresJobStore;
  readonly db: Kysely<any>;
  /** Ends the pools the registration created (a pool you passed in is left open). Idempotent. */
  close(): Promise<void>;
}

/** What {@link registerPostgresDriver} takes: where the database is, and how to use it. */
export type PostgresDriverRegistration = DatabaseConnection & PostgresDriverOptions;

const OPTION_KEYS = [
  "connectionString",
  "pool",
  "schema",
  "applicationName",
  "statementTimeoutMs",
  "connectionTimeoutMs",
  "maxConnections",
  "controlConnections",
  "controlStatementTimeoutMs",
  "onPoolError",
];

/**
 * Registers the PostgreSQL store in a tsyringe container: `JOB_STORE` → a
 * `PostgresJobStore`, and `POSTGRES_DB` → the `Kysely` instance. Nothing is
 * registered at import time and no SQL runs here (run `migrate` first).
 * Options are validated before anything is created: a bad option throws a
 * `ConfigError` naming it, a bad schema name an `InvalidNameError`.
 *
 * @example
 * ```ts
 * const driver = registerPostgresDriver(container, { connectionString: process.env.DATABASE_URL!, schema: "stint" });
 * const client = container.resolve(JobClient);
 * // … at shutdown:
 * await driver.close();
 * ```
 */
export function registerPostgresDriver(
  container: DependencyContainer,
  options: PostgresDriverRegistration,
): PostgresDriverHandle {
  if (typeof container !== "object" || container === null || typeof container.registerInstance !== "function") {
    throw new ConfigError("container", "must be a tsyringe DependencyContainer");
  }
  if (typeof options !== "object" || options === null) throw new ConfigError("options", "must be an object");
  rejectUnknownOptions("postgresDriver", options, OPTION_KEYS);
  const schema = assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema");
  const { connectionString, pool, ...settings } = options as { connectionString?: string; pool?: unknown } & PostgresDriverOptions;
  const connection = (pool === undefined ? { connectionString } : { pool }) as DatabaseConnection;
  const fromString = pool === undefined;
  const controlConnections = integerOption("controlConnections", options.controlConnections ?? (fromString ? 2 : 0), 0, 100);
  const controlStatementTimeoutMs = integerOption(
    "controlStatementTimeoutMs",
    options.controlStatementTimeoutMs ?? 10_000,
    0,
    2_147_483_647,
  );
  if (controlConnections > 0 && !fromString) {
    throw new ConfigError("controlConnections", "needs a `connectionString` (a separate pool cannot be made from your pool)");
  }
  const { schema: _schema, controlConnections: _size, controlStatementTimeoutMs: _timeout, ...poolOptions } = settings;
  const main = createDatabase({ ...connection, ...poolOptions } as Parameters<typeof createDatabase>[0]);
  let control: DatabaseHandle | undefined;
  try {
    if (controlConnections > 0) {
      control = createDatabase({
        ...(connection as { connectionString: string }),
        ...poolOptions,
        maxConnections: controlConnections,
        statementTimeoutMs: controlStatementTimeoutMs,
      });
    }
    const store = new PostgresJobStore({ db: main.db, schema, controlDb: control?.db });
    container.registerInstance(JOB_STORE, store);
    container.registerInstance(POSTGRES_DB, main.db);
    let closing: Promise<void> | undefined;
    const close = (): Promise<void> => {
      closing ??= Promise.all([main.close(), control?.close()]).then(() => undefined);
      return closing;
    };
    return Object.freeze({ store, db: main.db, close, [Symbol.asyncDispose]: close });
  } catch (thrown) {
    void main.close();
    void control?.close();
    throw thrown;
  }
}
