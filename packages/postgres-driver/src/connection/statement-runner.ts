import type { PostgresPool, PostgresPoolClient } from "kysely";
import pg from "pg";
import { dropConnection } from "../close-within";
import type { WarningListener } from "./driver-warning";
import { PreparedStatements, type PreparedStatementsMode } from "./prepared-statements";
import { ReadTimeoutWatch } from "./read-timeout-watch";
import type { StartupSettings } from "./startup-settings";
import type { Statement, StatementResult, Statements } from "./statement";

/** What a connection discarded after a read timeout fails with: expected, so never reported as a pool error. */
export const DISCARDED = new Error("connection discarded after a query read timeout");

/** The message a statement whose answer did not come within the read timeout fails with (pg's own). */
export const READ_TIMEOUT_MESSAGE = "Query read timeout";

/** The smallest pool that keeps a connection for the hot statements: it leaves the others at least two connections. */
export const MIN_POOL_SIZE = 3;

/** Options of {@link StatementRunner}, already checked by `createDatabase`. */
export interface StatementRunnerOptions {
  readonly pool: pg.Pool;
  readonly preparedStatements: PreparedStatementsMode;
  /** How long a statement may wait for its answer before its connection is dropped, in ms; `0` for no limit. */
  readonly readTimeoutMs: number;
  /** Keep one connection checked out for statements sent while it is free (see {@link StatementRunner}). */
  readonly keepConnection: boolean;
  /** The pool's startup parameters, when the pool is stint's own (a pooler may refuse its statement timeout). */
  readonly startup?: StartupSettings;
  readonly warn: WarningListener;
}

type Settle<R> = (error: Error | undefined, result?: StatementResult<R>) => void;

/**
 * Where a database's hot statements go (`createDatabase` returns one as
 * `statements`): they are sent as `{ name, text, values }`, named where
 * the prepared-statement mode allows, under the pool's read timeout.
 *
 * @example
 * ```ts
 * const { db, statements } = createDatabase({ connectionString });
 * const store = new PostgresJobStore({ db, statements });
 * statements.preparedStatements; // { mode: "auto", named: true }, until a pooler refuses a name
 * ```
 */
export interface StatementRunner {
  /** Runs one statement outside any transaction. */
  run<R extends object>(statement: Statement): Promise<StatementResult<R>>;
  /** The prepared-statement mode, and whether statements are still sent named (`"auto"` turns this false behind a transaction pooler). */
  readonly preparedStatements: { readonly mode: PreparedStatementsMode; readonly named: boolean };
  /** Whether a pooler refused the statement timeout at startup, so the pool's connections go without it. */
  readonly statementTimeoutRefused: boolean;
}

/**
 * Every statement stint sends to one pool goes through here, explicitly:
 *
 * - the hot statements (`run`: claims, enqueues, heartbeats, outcome
 *   writes) as `{ name, text, values }`, named while the prepared-statement
 *   mode allows (see {@link PreparedStatements}): on `"auto"`, the first
 *   statement a transaction pooler refuses is sent again unnamed, and so
 *   is every statement after it;
 * - Kysely's statements, through {@link kyselyPool}, which Kysely's
 *   `PostgresDialect` takes as its pool.
 *
 * Both get the read timeout: a statement not answered within
 * `readTimeoutMs` of being sent fails with "Query read timeout" and its
 * connection is dropped (one timer per connection, see
 * {@link ReadTimeoutWatch}). Both connect through the pool's startup
 * settings' fallback (a pooler that refuses `statement_timeout`).
 *
 * With `keepConnection`, the connection that served the first hot
 * statement is kept checked out, and hot statements go straight to it
 * while it is free, skipping the pool's check-out (a turn of the event
 * loop, a timer and the waiting-queue bookkeeping per statement); while
 * it runs a statement the others go through the pool, so none waits
 * behind another. A kept connection whose statement fails, or that ends,
 * is given back (the pool discards it) and the next pool statement's
 * connection is kept instead.
 *
 * pg's objects are used through their public calls only: a statement is a
 * `pg.Query` this runner makes, sent on a connection it checked out.
 *
 * @example
 * ```ts
 * const runner = new PoolStatementRunner({ pool, preparedStatements: "auto", readTimeoutMs: 35_000, keepConnection: true, warn: emitProcessWarning });
 * const { rows } = await runner.run<{ n: number }>({ name: "stint_7", text: "SELECT $1::integer AS n", values: [7] });
 * const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: runner.kyselyPool }) });
 * ```
 */
export class PoolStatementRunner implements StatementRunner, Statements {
  readonly #pool: pg.Pool;
  readonly #prepared: PreparedStatements;
  readonly #readTimeoutMs: number;
  readonly #keepConnection: boolean;
  readonly #startup: StartupSettings | undefined;
  readonly #watches = new WeakMap<pg.PoolClient, ReadTimeoutWatch>();
  readonly #kyselyClients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  #kept: pg.PoolClient | undefined;
  #keptBusy = false;
  #closed = false;

  constructor(options: StatementRunnerOptions) {
    this.#pool = options.pool;
    this.#prepared = new PreparedStatements(options.preparedStatements, options.warn);
    this.#readTimeoutMs = options.readTimeoutMs;
    this.#keepConnection = options.keepConnection;
    this.#startup = options.startup;
  }

  /** The prepared-statement mode, and whether statements are still sent named. */
  get preparedStatements(): { readonly mode: PreparedStatementsMode; readonly named: boolean } {
    return { mode: this.#prepared.mode, named: this.#prepared.named };
  }

  /** Whether a pooler refused the statement timeout, so this pool's connections go without it. */
  get statementTimeoutRefused(): boolean {
    return this.#startup?.statementTimeoutRefused ?? false;
  }

  /**
   * Runs one statement outside any transaction: on the kept connection
   * when it is free, on a connection checked out for it otherwise. Not an
   * `async` function: the answer settles the returned promise directly.
   */
  run<R extends object>(statement: Statement): Promise<StatementResult<R>> {
    return new Promise((resolve, reject) => {
      this.#send<R>(statement, this.#prepared.nameOf(statement), (error, result) => (error === undefined ? resolve(result!) : reject(error)));
    });
  }

  /** The pool as Kysely's `PostgresDialect` takes it: its connections are watched by the read timeout. */
  readonly kyselyPool: PostgresPool = Object.freeze({
    connect: (): Promise<PostgresPoolClient> =>
      new Promise((resolve, reject) => {
        this.#checkOut((error, client) => (error === undefined ? resolve(this.#forKysely(client!)) : reject(error)));
      }),
    end: (): Promise<void> => this.#pool.end(),
  });

  /** Gives the kept connection back to the pool (at once, even mid-statement: the pool is closing). Idempotent. */
  close(): void {
    this.#closed = true;
    const kept = this.#kept;
    if (kept === undefined) return;
    this.#kept = undefined;
    kept.release(this.#keptBusy ? new Error("the database is closing") : undefined);
  }

  #send<R>(statement: Statement, name: string | undefined, settle: Settle<R>): void {
    const kept = this.#kept;
    if (kept !== undefined && !this.#keptBusy) {
      this.#keptBusy = true;
      this.#query(kept, statement, name, settle);
      return;
    }
    this.#checkOut((error, client) => {
      if (error === undefined) this.#query(client!, statement, name, settle);
      else settle(error);
    });
  }

  #query<R>(client: pg.PoolClient, statement: Statement, name: string | undefined, settle: Settle<R>): void {
    const answered = this.#watchOf(client)?.sent();
    const config = { name, text: statement.text, values: statement.values as unknown[] };
    // pg answers a success with a null error, whatever its types say.
    const query = new pg.Query(config, undefined, (error: Error | undefined, result: unknown) => {
      answered?.();
      this.#done(client, error ?? undefined);
      if (error === undefined || error === null) settle(undefined, result as StatementResult<R>);
      else if (name !== undefined && this.#prepared.fallsBack(error)) this.#send(statement, undefined, settle);
      else settle(error);
    });
    client.query(query);
  }

  /** A statement on `client` is over: keep the connection, or give it back (with an error, so the pool discards it). */
  #done(client: pg.PoolClient, error: Error | undefined): void {
    if (error?.message === READ_TIMEOUT_MESSAGE) dropConnection(client, DISCARDED);
    if (client === this.#kept) {
      this.#keptBusy = false;
      if (error === undefined && !this.#closed) return;
      this.#kept = undefined;
    } else if (error === undefined && this.#keepConnection && this.#kept === undefined && !this.#closed) {
      this.#keep(client);
      return;
    }
    client.release(error);
  }

  #keep(client: pg.PoolClient): void {
    this.#kept = client;
    this.#keptBusy = false;
    const lost = (): void => {
      if (this.#kept !== client) return;
      this.#kept = undefined;
      // A kept connection that fails mid-statement is given back when that statement fails.
      if (!this.#keptBusy) client.release(new Error("the kept connection ended"));
      this.#keptBusy = false;
    };
    client.once("error", lost);
    client.once("end", lost);
  }

  /** Checks a connection out of the pool; a connect a pooler refused for its statement timeout is tried once more without it. */
  #checkOut(callback: (error: Error | undefined, client?: pg.PoolClient) => void, retried = false): void {
    this.#pool.connect((error: Error | undefined, client: pg.PoolClient | undefined) => {
      if (error === undefined || error === null) callback(undefined, client);
      else if (!retried && this.#startup?.refusedBy(error) === true) this.#checkOut(callback, true);
      else callback(error);
    });
  }

  #watchOf(client: pg.PoolClient): ReadTimeoutWatch | undefined {
    if (this.#readTimeoutMs === 0) return undefined;
    let watch = this.#watches.get(client);
    if (watch === undefined) {
      watch = new ReadTimeoutWatch(this.#readTimeoutMs, () => dropConnection(client, new Error(READ_TIMEOUT_MESSAGE)));
      this.#watches.set(client, watch);
    }
    return watch;
  }

  /** The face of a checked-out connection Kysely uses: the same object each time for one connection, as Kysely keys its own state on it. */
  #forKysely(client: pg.PoolClient): PostgresPoolClient {
    let face = this.#kyselyClients.get(client);
    if (face === undefined) {
      const query = (text: string, parameters: readonly unknown[]): Promise<pg.QueryResult> => {
        const answered = this.#watchOf(client)?.sent();
        const answer = client.query(text, parameters as unknown[]);
        answer.then(answered, (error: unknown) => {
          answered?.();
          if ((error as Error | null)?.message === READ_TIMEOUT_MESSAGE) dropConnection(client, DISCARDED);
        });
        return answer;
      };
      const queryOrCursor = (textOrCursor: unknown, parameters?: readonly unknown[]): unknown =>
        typeof textOrCursor === "string" ? query(textOrCursor, parameters ?? []) : client.query(textOrCursor as pg.Submittable);
      face = {
        query: queryOrCursor as PostgresPoolClient["query"],
        release: () => client.release(),
      };
      this.#kyselyClients.set(client, face);
    }
    return face;
  }
}
