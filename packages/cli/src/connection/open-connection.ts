import { JOB_STORE, type JobStore } from "@stint/core";
import { SCHEDULE_STORE, type ScheduleStore } from "@stint/core/driver";
import { interpretError, registerPostgresDriver, schemaStatus, type WarningListener } from "@stint/postgres-driver";
import type { Kysely } from "kysely";
import { container as rootContainer } from "tsyringe";
import { configError } from "../cli-error";
import { migrateHint, missingSchemaMessage } from "../explain-failure";
import type { Output } from "../io";
import type { DatabaseTarget } from "./database-url";

/** An open connection to stint's tables: the stores the commands use. */
export interface Connection {
  readonly store: JobStore;
  /** The schedule store, when this driver version registers one. */
  readonly schedules: ScheduleStore | undefined;
  readonly db: Kysely<any>;
  readonly schema: string;
  readonly target: DatabaseTarget;
  /** Closes the pool. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link openConnection}. */
export interface OpenConnectionOptions {
  readonly schema: string;
  /** How long to wait for PostgreSQL to accept the connection. */
  readonly connectTimeoutMs: number;
  /** Where `STINT_PREPARED_STATEMENTS` and `STINT_SESSION_DATABASE_URL` are read from. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** What the driver changed by itself behind a pooler, said once each. */
  readonly onWarning: WarningListener;
}

/**
 * Registers the PostgreSQL driver in a container of its own (a small pool
 * named `stint-cli`), then opens one connection so that an unreachable
 * server or a refused login is reported before the command starts. Rejects
 * with the driver's interpreted error (`InfrastructureError`,
 * `DatabaseError`), which `explainFailure` turns into a message.
 */
export async function openConnection(target: DatabaseTarget, options: OpenConnectionOptions): Promise<Connection> {
  const container = rootContainer.createChildContainer();
  const driver = registerPostgresDriver(container, {
    connectionString: target.url,
    schema: options.schema,
    applicationName: "stint-cli",
    maxConnections: 2,
    controlConnections: 0,
    connectionTimeoutMs: options.connectTimeoutMs,
    statementTimeoutMs: 300_000,
    onPoolError: () => undefined,
    env: options.env,
    onWarning: options.onWarning,
  });
  try {
    await driver.db.connection().execute(() => Promise.resolve());
  } catch (thrown) {
    await driver.close();
    throw interpretError(thrown, "connect");
  }
  const store = container.resolve(JOB_STORE);
  const schedules = container.isRegistered(SCHEDULE_STORE) ? container.resolve(SCHEDULE_STORE) : undefined;
  return Object.freeze({ store, schedules, db: driver.db, schema: options.schema, target, close: () => driver.close() });
}

/**
 * Checks that the connection's schema is migrated as far as this stint
 * needs: a missing or older schema is a configuration error (exit 78) that
 * says to run `stint migrate`; a newer one (migrated by a newer stint) only
 * gets a warning on stderr. Returns the connection.
 */
export async function checkSchema(connection: Connection, out: Output): Promise<Connection> {
  const { exists, version, latest } = await schemaStatus(connection.db, connection.schema);
  if (!exists || version === 0) throw configError(missingSchemaMessage(connection.schema));
  if (version < latest) {
    throw configError(`schema "${connection.schema}" is at migration ${version}, this stint needs ${latest} — ${migrateHint(connection.schema)}`);
  }
  if (version > latest) {
    out.note(`stint: warning: schema "${connection.schema}" is at migration ${version}, newer than this stint knows (${latest}); upgrade the CLI`);
  }
  return connection;
}
