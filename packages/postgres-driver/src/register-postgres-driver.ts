import { ConfigError, JOB_EVENTS, JOB_STORE } from "@stint/core";
import { applicationName } from "@stint/core/internal";
import { assertSqlIdentifier, integerOption, LEADER_LOCK, rejectUnknownOptions, SCHEDULE_STORE, WAKEUP_SOURCE, MAX_INT4 } from "@stint/core/driver";
import type { Kysely } from "kysely";
import type { DependencyContainer } from "tsyringe";
import { resolveConnectionVariables, type ConnectionVariables } from "./connection/connection-variables";
import { emitProcessWarning, warnOnce, type WarningListener } from "./connection/driver-warning";
import { SessionCheck } from "./connection/session-check";
import { createDatabase, type DatabaseConnection, type DatabaseHandle, type PoolSettings } from "./create-database";
import { PostgresCompletionSource } from "./postgres-completion-source";
import { PostgresJobEvents } from "./events/postgres-job-events";
import { PostgresJobStore } from "./postgres-job-store";
import { POSTGRES_CONNECTION_SETTINGS, POSTGRES_DB } from "./postgres-db-token";
import { PostgresLeaderLock } from "./postgres-leader-lock";
import { PostgresWakeupSource } from "./postgres-wakeup-source";
import { DEFAULT_SCHEMA } from "./schema/default-schema";

/**
 * Settings of {@link registerPostgresDriver} besides where the database is.
 * `applicationName` names the main pool only; without it the main pool is
 * `stint:worker:<process identity>`. The control pool, the LISTEN connection
 * of the wake-ups, the leader lock and the LISTEN connection of the waits
 * (`client.waitFor`) are always `stint:control:…`, `stint:listen:…`,
 * `stint:leader:…` and `stint:await:…`.
 */
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
  /** The store's ceiling on a payload's JSON size, whatever the job kind allows. Default 1 MiB. */
  readonly maxPayloadBytes?: number;
  /**
   * Where the long-lived session connections connect: the LISTEN of the
   * wake-ups and of the completion hints, and the leader lock. They need a
   * session; behind a transaction pooler (found out at their first use,
   * see `SessionCheck`) workers poll, waits poll and the leader holds a
   * lease row instead, with one warning. Point this past the pooler to
   * keep wake-ups. Defaults to `connectionString`; with `pool`, wake-ups
   * and the leader lock are registered only when this is given.
   * `STINT_SESSION_DATABASE_URL` overrides it.
   */
  readonly sessionConnectionString?: string;
  /**
   * Where `STINT_PREPARED_STATEMENTS` and `STINT_SESSION_DATABASE_URL` are
   * read from; they win over `preparedStatements` and
   * `sessionConnectionString`. Default `process.env`.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Told once per kind (stable `code`) of each thing the driver changed by
   * itself behind a pooler: unnamed statements, polling instead of
   * LISTEN, no server-side statement timeout. Default: a process warning.
   */
  readonly onWarning?: WarningListener;
}

/** What {@link registerPostgresDriver} registered, and how to close it. */
export interface PostgresDriverHandle extends AsyncDisposable {
  /** The `JobStore`, also registered as the `ScheduleStore`. */
  readonly store: PostgresJobStore;
  readonly db: Kysely<any>;
  /** The `WakeupSource`, or `undefined` when none was registered (a pool without `sessionConnectionString`). */
  readonly wakeupSource: PostgresWakeupSource | undefined;
  /** The `LeaderLock` (named "maintenance"), or `undefined` when none was registered. */
  readonly leaderLock: PostgresLeaderLock | undefined;
  /** The store's completion hints for `client.waitFor`, or `undefined` (then waiters only poll) when there is no session connection. */
  readonly completionSource: PostgresCompletionSource | undefined;
  /** Job events from every process (also registered as `JOB_EVENTS`), or `undefined` when there is no session connection. */
  readonly jobEvents: PostgresJobEvents | undefined;
  /** The connection settings in force and where each came from (also registered as `POSTGRES_CONNECTION_SETTINGS`). */
  readonly settings: ConnectionVariables;
  /** Whether the session connection string keeps sessions (shared by the wake-ups, the completion hints and the leader lock), or `undefined` without one. */
  readonly sessionCheck: SessionCheck | undefined;
  /**
   * Ends what the registration created: the wake-up and leader-lock
   * connections (releasing the lock) and the pools (a pool you passed in
   * is left open). Idempotent.
   */
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
  "queryTimeoutMs",
  "preparedStatements",
  "connectionTimeoutMs",
  "maxConnections",
  "controlConnections",
  "controlStatementTimeoutMs",
  "onPoolError",
  "sessionConnectionString",
  "maxPayloadBytes",
  "env",
  "onWarning",
];

/**
 * Registers the PostgreSQL driver in a tsyringe container:
 *
 * - `JOB_STORE` and `SCHEDULE_STORE` → one `PostgresJobStore`;
 * - `POSTGRES_DB` → the `Kysely` instance;
 * - `WAKEUP_SOURCE` → a `PostgresWakeupSource` and `LEADER_LOCK` → a
 *   `PostgresLeaderLock` (lock "maintenance"), each on its own dedicated
 *   connection to `sessionConnectionString` (default: `connectionString`);
 * - the store's `completions`, a `PostgresCompletionSource` on a third
 *   such connection, opened while some `client.waitFor` waits;
 * - `JOB_EVENTS` → a `PostgresJobEvents` on a fourth, opened while some
 *   job-event subscription is open (`stint:events:…`).
 *
 * Every connection says whose it is in `application_name`:
 * `stint:<role>:<process identity>` (see `applicationName` in core) with
 * the role `worker` (the main pool; your `applicationName` replaces this one
 * name), `control`, `listen`, `leader`, `await` or `check` (the session
 * check's two short connections) — so an operator, or a test, can find one
 * process's connections in `pg_stat_activity`.
 *   Given a `pool` and no `sessionConnectionString`, none of the three is
 *   registered (waits then only poll): a pooled connection cannot hold a LISTEN or a session lock
 *   for good.
 *
 * Nothing is registered at import time and nothing connects here: the pools
 * connect on the first query, the wake-ups on the first `subscribe`, the
 * lock on the first `tryAcquire` (run `migrate` first).
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
export function registerPostgresDriver(container: DependencyContainer, options: PostgresDriverRegistration): PostgresDriverHandle {
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
  const controlStatementTimeoutMs = integerOption("controlStatementTimeoutMs", options.controlStatementTimeoutMs ?? 10_000, 0, MAX_INT4);
  if (controlConnections > 0 && !fromString) {
    throw new ConfigError("controlConnections", "needs a `connectionString` (a separate pool cannot be made from your pool)");
  }
  const given = options.sessionConnectionString;
  if (given !== undefined && (typeof given !== "string" || given.trim() === "")) {
    throw new ConfigError("sessionConnectionString", "must be a non-empty string such as postgres://user@host:5432/db");
  }
  if (options.env !== undefined && (typeof options.env !== "object" || options.env === null)) throw new ConfigError("env", "must be an object of variables");
  if (options.onWarning !== undefined && typeof options.onWarning !== "function") throw new ConfigError("onWarning", "must be a function");
  const variables = resolveConnectionVariables(options.env ?? process.env, {
    ...pickDefined(options, "preparedStatements"),
    ...pickDefined(options, "sessionConnectionString"),
  });
  const sessionConnectionString = variables.sessionConnectionString.value ?? connectionString;
  const warn = warnOnce(options.onWarning ?? emitProcessWarning);
  const {
    schema: _schema,
    controlConnections: _size,
    controlStatementTimeoutMs: _timeout,
    sessionConnectionString: _session,
    env: _env,
    onWarning: _onWarning,
    maxPayloadBytes,
    ...givenPoolOptions
  } = settings;
  const poolOptions = { ...givenPoolOptions, preparedStatements: variables.preparedStatements.value, onWarning: warn };
  const mainName = fromString ? { applicationName: options.applicationName ?? applicationName("worker") } : {};
  const main = createDatabase({ ...connection, ...poolOptions, ...mainName });
  let control: DatabaseHandle | undefined;
  try {
    if (controlConnections > 0) {
      control = createDatabase({
        ...(connection as { connectionString: string }),
        ...poolOptions,
        maxConnections: controlConnections,
        statementTimeoutMs: controlStatementTimeoutMs,
        applicationName: applicationName("control"),
      });
    }
    const session = sessionConnectionString === undefined ? undefined : sessionClients(sessionConnectionString, schema, warn);
    const store = new PostgresJobStore({
      db: main.db,
      statements: main.statements,
      schema,
      ...(control === undefined ? {} : { controlDb: control.db, controlStatements: control.statements }),
      ...(maxPayloadBytes === undefined ? {} : { maxPayloadBytes }),
      ...(session === undefined ? {} : { completions: session.completionSource }),
    });
    container.registerInstance(JOB_STORE, store);
    container.registerInstance(SCHEDULE_STORE, store);
    container.registerInstance(POSTGRES_DB, main.db);
    container.registerInstance(POSTGRES_CONNECTION_SETTINGS, variables);
    if (session !== undefined) {
      container.registerInstance(WAKEUP_SOURCE, session.wakeupSource);
      container.registerInstance(LEADER_LOCK, session.leaderLock);
      container.registerInstance(JOB_EVENTS, session.jobEvents);
    }
    let closing: Promise<void> | undefined;
    const close = (): Promise<void> => {
      // All at once: each close is bounded, so a dead network costs one bound, not four.
      closing ??= Promise.all([
        session?.wakeupSource.close(),
        session?.leaderLock.close(),
        session?.completionSource.close(),
        session?.jobEvents.close(),
        main.close(),
        control?.close(),
      ]).then(() => undefined);
      return closing;
    };
    return Object.freeze({
      store,
      db: main.db,
      wakeupSource: session?.wakeupSource,
      leaderLock: session?.leaderLock,
      completionSource: session?.completionSource,
      jobEvents: session?.jobEvents,
      settings: variables,
      sessionCheck: session?.sessionCheck,
      close,
      [Symbol.asyncDispose]: close,
    });
  } catch (thrown) {
    void main.close();
    void control?.close();
    throw thrown;
  }
}

/**
 * The wake-up source, the leader lock and the completion hints, named
 * `stint:listen:…`, `stint:leader:…` and `stint:await:<process identity>`
 * by default. None connects before it is used.
 */
function sessionClients(
  connectionString: string,
  schema: string,
  onWarning: WarningListener,
): {
  readonly wakeupSource: PostgresWakeupSource;
  readonly leaderLock: PostgresLeaderLock;
  readonly completionSource: PostgresCompletionSource;
  readonly jobEvents: PostgresJobEvents;
  readonly sessionCheck: SessionCheck;
} {
  const sessionCheck = new SessionCheck({ connectionString, applicationName: applicationName("check"), onWarning });
  return {
    wakeupSource: new PostgresWakeupSource({ connectionString, schema, sessionCheck }),
    leaderLock: new PostgresLeaderLock({ connectionString, schema, sessionCheck }),
    completionSource: new PostgresCompletionSource({ connectionString, schema, sessionCheck }),
    jobEvents: new PostgresJobEvents({ connectionString, schema, sessionCheck }),
    sessionCheck,
  };
}

/** `{ [key]: options[key] }` when it is set, `{}` otherwise (for optional properties under exactOptionalPropertyTypes). */
function pickDefined<T extends object, K extends keyof T>(options: T, key: K): Partial<Pick<T, K>> {
  return options[key] === undefined ? {} : ({ [key]: options[key] } as Partial<Pick<T, K>>);
}
