import { ConfigError } from "@stint/core";
import { applicationName as stintApplicationName } from "@stint/core/internal";
import { integerOption, rejectUnknownOptions, MAX_INT4 } from "@stint/core/driver";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { closeWithin, dropConnection } from "./close-within";
import { emitProcessWarning, type WarningListener } from "./connection/driver-warning";
import { PREPARED_STATEMENTS_MODES, type PreparedStatementsMode } from "./connection/prepared-statements";
import { StartupSettings } from "./connection/startup-settings";
import { DISCARDED, MIN_POOL_SIZE, PoolStatementRunner, type StatementRunner } from "./connection/statement-runner";

/** How to reach PostgreSQL: a connection string (stint creates and owns the pool) or your own pool. */
export type DatabaseConnection = { readonly connectionString: string } | { readonly pool: pg.Pool };

/** Settings of a pool that stint creates from a connection string. */
export interface PoolSettings {
  /**
   * `application_name` shown in `pg_stat_activity`. Default
   * `stint:worker:<process identity>` (host, pid and a random token; see
   * `applicationName` in `@stint/core`), so an operator can tell which
   * process a connection belongs to.
   */
  readonly applicationName?: string;
  /** `statement_timeout` of every connection, in ms; `0` for none. Default 30 000. */
  readonly statementTimeoutMs?: number;
  /**
   * Whether the hot statements (claims, enqueues, heartbeats, outcome
   * writes) go as named prepared statements, parsed and planned once per
   * connection:
   *
   * - `"auto"` (default): named while that works. A transaction pooler
   *   (PgBouncer in `pool_mode=transaction` before 1.21, and poolers like
   *   it) hands a client's statements to different server connections, so
   *   a named statement fails with SQLSTATE 42P05 or 26000 before it runs;
   *   at the first such failure the pool switches to unnamed statements for
   *   good, sends that statement again, and says so once (`onWarning`,
   *   code `STINT_UNNAMED_STATEMENTS`).
   * - `"on"` (or `true`): always named; that failure is an error.
   * - `"off"` (or `false`): never named.
   *
   * `registerPostgresDriver` also reads `STINT_PREPARED_STATEMENTS`.
   */
  readonly preparedStatements?: PreparedStatementsMode | boolean;
  /**
   * How long the client waits for any statement's answer, in ms, before it
   * gives up and discards the connection; `0` for no limit. It catches what
   * `statement_timeout` cannot: a connection the network silently stopped
   * carrying (the server never sees the statement, or its answer is lost).
   * Default `statementTimeoutMs` + 5 000, or none when that is 0.
   */
  readonly queryTimeoutMs?: number;
  /** How long to wait for a new connection, in ms. Default 10 000. */
  readonly connectionTimeoutMs?: number;
  /**
   * Size of the pool. Default 10. A pool of 3 or more keeps one of its
   * connections checked out for the hot statements (see `StatementRunner`).
   */
  readonly maxConnections?: number;
}

/** Options of {@link createDatabase}. */
export type DatabaseOptions = DatabaseConnection &
  PoolSettings & {
    /**
     * Called when an idle pooled connection fails (the server restarted or
     * killed it). The pool discards the connection either way; the default
     * emits a process warning instead of letting the error crash the process.
     */
    readonly onPoolError?: (error: Error) => void;
    /**
     * Called once for each thing the pool changed by itself to keep working
     * behind a pooler (unnamed statements, no server-side statement
     * timeout), with a stable `code` and a message naming the setting.
     * Default: a process warning.
     */
    readonly onWarning?: WarningListener;
  };

/** A Kysely instance over a pg pool, and the way to close it. */
export interface DatabaseHandle extends AsyncDisposable {
  /** Kysely over the pool, for every statement that is not a hot one. */
  readonly db: Kysely<any>;
  /**
   * Where the hot statements go (pass it to `PostgresJobStore` with `db`):
   * it owns the prepared-statement mode, the read timeout and the kept
   * connection, and Kysely's statements go through it too.
   */
  readonly statements: StatementRunner;
  /**
   * The pg pool underneath. Statements sent to it directly get neither the
   * read timeout nor the pooler fallbacks: send them through `db`.
   */
  readonly pool: pg.Pool;
  /** True when the pool was created here (and `close()` ends it). */
  readonly ownsPool: boolean;
  /** Ends the pool if this handle created it; a pool you passed in is left open. Idempotent. */
  close(): Promise<void>;
}

const POOL_SETTING_KEYS = ["applicationName", "statementTimeoutMs", "queryTimeoutMs", "connectionTimeoutMs", "maxConnections"];
const OPTION_KEYS = ["connectionString", "pool", "onPoolError", "onWarning", "preparedStatements", ...POOL_SETTING_KEYS];

/**
 * Builds a `Kysely` over a `pg.Pool`, and the {@link StatementRunner} every
 * statement goes through (Kysely's included). From a connection string it
 * creates the pool with `application_name` (default `stint:worker:<process identity>`), a `statement_timeout`
 * (default 30 s; left out, with one warning, when a pooler refuses it at
 * startup), a client-side read timeout a little longer, TCP
 * keep-alive, a connection timeout, and int8 columns kept as strings; a
 * pool you pass in is used as is. Either way `error` listeners are attached
 * (to the pool if it has none, and to each new connection) so a connection
 * killed by the server, idle or in use, cannot crash the process, and a
 * connection whose query timed out on the client is discarded instead of
 * going back to the pool (its socket may be half-open: every later query on
 * it would wait for an answer that never comes). `close` ends a pool it
 * created and drops the sockets that have not closed a second later (a
 * network that stopped carrying them), so nothing of it keeps the process alive.
 *
 * @example
 * ```ts
 * const database = createDatabase({ connectionString: process.env.DATABASE_URL!, statementTimeoutMs: 10_000 });
 * await sql`SELECT 1`.execute(database.db);
 * await database.close();
 * ```
 */
export function createDatabase(options: DatabaseOptions): DatabaseHandle {
  const settings = validateDatabaseOptions(options);
  const ownsPool = !("pool" in options && options.pool !== undefined);
  const warn = options.onWarning ?? emitProcessWarning;
  const startup = ownsPool ? new StartupSettings(settings.statementTimeoutMs, warn) : undefined;
  const pool = ownsPool ? createPool((options as { connectionString: string }).connectionString, settings, startup!) : (options as { pool: pg.Pool }).pool;
  const onPoolError = options.onPoolError ?? warnAboutPoolError;
  if (ownsPool || pool.listenerCount("error") === 0) pool.on("error", (error) => error === DISCARDED || onPoolError(error));
  // pg emits `error` on a client whose connection dies. The pool listens only
  // while the client is idle; a checked-out client without a listener would
  // crash the process. The failing query rejects with the same error and the
  // client is not reused, so the event itself needs no handling.
  /** Connections of this pool whose socket has not closed yet, with a promise of that close. */
  const open = new Map<pg.PoolClient, Promise<void>>();
  pool.on("connect", (client: pg.PoolClient) => {
    client.on("error", ignoreClientError);
    open.set(
      client,
      new Promise<void>((resolve) => client.once("end", resolve)).then(() => void open.delete(client)),
    );
  });
  const statements = new PoolStatementRunner({
    pool,
    preparedStatements: settings.preparedStatements,
    // A pool passed in keeps its own read timeout (pg's `query_timeout`); one created here is watched per connection.
    readTimeoutMs: ownsPool ? settings.queryTimeoutMs : 0,
    keepConnection: ownsPool && settings.maxConnections >= MIN_POOL_SIZE,
    ...(startup === undefined ? {} : { startup }),
    warn,
  });
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: statements.kyselyPool }) });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    statements.close();
    // The pool's end does not wait for its sockets to close; over a network that stopped carrying them they never
    // would, and would keep the process alive: they are dropped after a moment.
    closing ??= ownsPool
      ? db.destroy().then(() => closeWithin(Promise.all(open.values()), () => open.forEach((_, client) => dropConnection(client, DISCARDED))))
      : Promise.resolve();
    return closing;
  };
  return Object.freeze({ db, statements, pool, ownsPool, close, [Symbol.asyncDispose]: close });
}

/** {@link PoolSettings} checked, with their defaults. */
type CheckedSettings = Required<Omit<PoolSettings, "preparedStatements">> & { readonly preparedStatements: PreparedStatementsMode };

/** The mode `preparedStatements` asks for: a mode's name, or a boolean for "on"/"off". */
function preparedStatementsMode(value: unknown): PreparedStatementsMode {
  if (value === undefined) return "auto";
  if (value === true) return "on";
  if (value === false) return "off";
  if (typeof value === "string" && (PREPARED_STATEMENTS_MODES as readonly string[]).includes(value)) return value as PreparedStatementsMode;
  throw new ConfigError("preparedStatements", `must be "auto", "on" or "off" (or true/false), got ${JSON.stringify(value)}`);
}

function validateDatabaseOptions(options: DatabaseOptions): CheckedSettings {
  if (typeof options !== "object" || options === null) {
    throw new ConfigError("connection", "must be an object with `connectionString` or `pool`");
  }
  rejectUnknownOptions("database", options, OPTION_KEYS);
  const hasString = "connectionString" in options && options.connectionString !== undefined;
  const hasPool = "pool" in options && options.pool !== undefined;
  if (hasString === hasPool) {
    throw new ConfigError("connection", "give exactly one of `connectionString` and `pool`");
  }
  if (hasString && (typeof options.connectionString !== "string" || options.connectionString.trim() === "")) {
    throw new ConfigError("connectionString", "must be a non-empty string such as postgres://user@host:5432/db");
  }
  if (hasPool && !looksLikePool((options as { pool: unknown }).pool)) {
    throw new ConfigError("pool", "must be a pg.Pool");
  }
  if (hasPool) {
    const given = POOL_SETTING_KEYS.find((key) => (options as unknown as Record<string, unknown>)[key] !== undefined);
    if (given !== undefined) throw new ConfigError(given, "applies only to a pool created from `connectionString`");
  }
  if (options.onPoolError !== undefined && typeof options.onPoolError !== "function") {
    throw new ConfigError("onPoolError", "must be a function");
  }
  const applicationName = options.applicationName ?? stintApplicationName("worker");
  if (typeof applicationName !== "string" || applicationName.length > 63) {
    throw new ConfigError("applicationName", "must be a string of at most 63 characters");
  }
  const statementTimeoutMs = integerOption("statementTimeoutMs", options.statementTimeoutMs ?? 30_000, 0, MAX_INT4);
  if (options.onWarning !== undefined && typeof options.onWarning !== "function") {
    throw new ConfigError("onWarning", "must be a function");
  }
  return {
    applicationName,
    preparedStatements: preparedStatementsMode(options.preparedStatements),
    statementTimeoutMs,
    queryTimeoutMs: integerOption("queryTimeoutMs", options.queryTimeoutMs ?? (statementTimeoutMs === 0 ? 0 : statementTimeoutMs + 5_000), 0, MAX_INT4),
    connectionTimeoutMs: integerOption("connectionTimeoutMs", options.connectionTimeoutMs ?? 10_000, 0, MAX_INT4),
    maxConnections: integerOption("maxConnections", options.maxConnections ?? 10, 1, 10_000),
  };
}

function createPool(connectionString: string, settings: CheckedSettings, startup: StartupSettings): pg.Pool {
  return new pg.Pool({
    Client: startup.clientClass(),
    connectionString,
    application_name: settings.applicationName,
    statement_timeout: settings.statementTimeoutMs === 0 ? false : settings.statementTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    connectionTimeoutMillis: settings.connectionTimeoutMs,
    max: settings.maxConnections,
    types: { getTypeParser: keepInt8AsText as typeof pg.types.getTypeParser },
  });
}

/** The type id pg looks a value parser up by. */
type TypeId = Parameters<typeof pg.types.getTypeParser>[0];

const INT8_OID = pg.types.builtins.INT8;

/** Idle time before TCP keep-alive probes start on a pooled connection. */
const KEEPALIVE_IDLE_MS = 10_000;

/** pg's parsers, except that int8 stays a string whatever a global `pg.types.setTypeParser` did. */
function keepInt8AsText(oid: TypeId, format?: "text" | "binary"): unknown {
  if (oid === INT8_OID && format !== "binary") return (value: string) => value;
  return format === undefined ? pg.types.getTypeParser(oid) : pg.types.getTypeParser(oid, format);
}

function looksLikePool(value: unknown): value is pg.Pool {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { connect?: unknown }).connect === "function" &&
    typeof (value as { query?: unknown }).query === "function" &&
    typeof (value as { on?: unknown }).on === "function"
  );
}

function ignoreClientError(): void {
  // Reported through the query that failed, or through the pool's `error` event when idle.
}

function warnAboutPoolError(error: Error): void {
  process.emitWarning(`An idle PostgreSQL connection failed and was discarded: ${error.message}`, {
    code: "STINT_POOL_ERROR",
  });
}
