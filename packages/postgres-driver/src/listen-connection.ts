import { coerceError } from "@stint/core/internal";
import pg from "pg";
import { closeWithin, dropConnection } from "./close-within";
import type { SessionCheck } from "./connection/session-check";
import { interpretError } from "./interpret-error";

/** How a {@link ListenConnection} connects, and whom it tells what. */
export interface ListenConnectionParts {
  readonly connectionString: string;
  readonly applicationName: string;
  /** The channel to LISTEN on. */
  readonly channel: string;
  /** First delay before reconnecting; doubles per failure up to `maxDelayMs`. */
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  /** How often a `SELECT 1` checks the connection; `0` for never. */
  readonly healthCheckMs: number;
  /** Each notification's payload on the channel. */
  readonly onNotification: (payload: string) => void;
  /**
   * Called once LISTEN is in place on a new connection, before `connect`
   * resolves; `missedSome` is true when an earlier connection was lost or
   * failed, so notifications may have been missed. May query through `query`.
   */
  readonly onListening: (missedSome: boolean) => Promise<void> | void;
  /** The connection it had dropped (it reconnects on its own); called before `onError` hears why. */
  readonly onLost?: () => void;
  /** Connection failures, which it handles by reconnecting. */
  readonly onError: (error: Error) => void;
  /** Whether anyone still needs the connection: it reconnects only while this is true. */
  readonly wanted: () => boolean;
  /** Whether `connectionString` keeps sessions: behind a transaction pooler it never connects (notifications cannot arrive). */
  readonly sessionCheck: SessionCheck;
}

/** Connection and query timeout of the listening connection. */
const TIMEOUT_MS = 10_000;

/**
 * One dedicated `pg.Client` that LISTENs on one channel (never from a
 * pool, never inside a transaction): connects on the first `connect`,
 * reconnects with a doubling delay (capped) while it is `wanted`, notices
 * a silently dead connection by a periodic `SELECT 1`, and closes within a
 * bound. The wake-ups and the completion hints each own one.
 *
 * Before its first LISTEN it asks the session check whether notifications
 * can arrive at all. On a direct connection (one round trip to tell) it
 * listens at once. Through a pooler, `connect` resolves without waiting
 * for the notification test: behind a transaction pooler notifications
 * cannot arrive (the LISTEN would stay on a server connection the client
 * no longer holds), so it never connects and its owners poll, as they
 * would with the connection down; behind a session pooler it connects when
 * the test says so, as after a reconnection (`onListening(true)`: some
 * notifications may have been missed meanwhile).
 *
 * @example
 * ```ts
 * const listen = new ListenConnection({ connectionString, applicationName, channel, minDelayMs: 100, maxDelayMs: 10_000,
 *   healthCheckMs: 30_000, onNotification: (payload) => wake(payload), onListening: () => undefined,
 *   onError: console.warn, wanted: () => true });
 * const failure = await listen.connect(); // undefined once listening
 * await listen.close();
 * ```
 */
export class ListenConnection {
  readonly #parts: ListenConnectionParts;
  #client: pg.Client | undefined;
  #connecting: Promise<Error | undefined> | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #healthTimer: NodeJS.Timeout | undefined;
  #failures = 0;
  #missedSome = false;
  #closed = false;
  /** Whether notifications can arrive: unknown until the session check says, false behind a transaction pooler (it never connects). */
  #sessions: "unknown" | "checking" | "yes" | "no" = "unknown";
  /** The last statement asked for: statements run one after another. */
  #queries: Promise<unknown> = Promise.resolve();

  constructor(parts: ListenConnectionParts) {
    this.#parts = parts;
  }

  /** True while the LISTEN connection is up. */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  /** Connects unless connected; resolves with the error of a failed attempt (a reconnection is then scheduled). */
  connect(): Promise<Error | undefined> {
    if (this.#client !== undefined || this.#closed || this.#sessions === "no" || this.#sessions === "checking") return Promise.resolve(undefined);
    if (this.#connecting === undefined) {
      clearTimeout(this.#retryTimer);
      this.#retryTimer = undefined;
      this.#connecting = this.#open().finally(() => {
        this.#connecting = undefined;
      });
    }
    return this.#connecting;
  }

  /**
   * Runs one statement on the listening connection (never in a
   * transaction), after those asked for before it; rejects when it is not
   * connected.
   */
  query<R extends pg.QueryResultRow>(text: string, values: readonly unknown[]): Promise<readonly R[]> {
    const run = this.#queries
      .catch(() => undefined)
      .then(async () => {
        const client = this.#client;
        if (client === undefined) throw interpretError(new Error("the LISTEN connection is not connected"), `LISTEN on channel "${this.#parts.channel}"`);
        const { rows } = await client.query<R>(text, [...values]);
        return rows;
      });
    this.#queries = run;
    return run;
  }

  /** Stops listening and ends the connection, for good. Bounded: a connection that does not end within a second is dropped. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    clearInterval(this.#healthTimer);
    const client = this.#client;
    this.#client = undefined;
    const connecting = this.#connecting;
    // A connection the network stopped carrying never acknowledges its end: it is dropped after a moment.
    await closeWithin(
      Promise.resolve(connecting).then(() => client?.end()),
      () => client !== undefined && dropConnection(client),
    );
  }

  async #open(): Promise<Error | undefined> {
    const { channel } = this.#parts;
    try {
      if (this.#sessions === "unknown" && (await this.#parts.sessionCheck.firstLook()) === "pooler") {
        this.#sessions = "checking";
        void this.#connectOnceKnown();
        return undefined;
      }
      this.#sessions = "yes";
    } catch (thrown) {
      const error = interpretError(thrown, `LISTEN on channel "${channel}"`);
      this.#missedSome = true;
      this.#report(error);
      this.#scheduleReconnect();
      return error;
    }
    const client = new pg.Client({
      connectionString: this.#parts.connectionString,
      application_name: this.#parts.applicationName,
      keepAlive: true,
      connectionTimeoutMillis: TIMEOUT_MS,
      query_timeout: this.#parts.healthCheckMs === 0 ? TIMEOUT_MS : Math.min(TIMEOUT_MS, this.#parts.healthCheckMs),
    });
    client.on("error", (error) => this.#lost(client, error));
    client.on("end", () => this.#lost(client, undefined));
    client.on("notification", (message) => {
      if (message.channel === channel && message.payload !== undefined) this.#parts.onNotification(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (thrown) {
      await client.end().catch(() => undefined);
      const error = interpretError(thrown, `LISTEN on channel "${channel}"`);
      this.#missedSome = true;
      this.#report(error);
      this.#scheduleReconnect();
      return error;
    }
    if (this.#closed) {
      await client.end().catch(() => undefined);
      return undefined;
    }
    this.#client = client;
    this.#failures = 0;
    this.#watch(client);
    const missedSome = this.#missedSome;
    this.#missedSome = false;
    try {
      await this.#parts.onListening(missedSome);
    } catch (thrown) {
      this.#report(coerceError(thrown));
    }
    return undefined;
  }

  /** Through a pooler: waits for the session check's verdict, then connects (a session pooler) or never will (a transaction pooler). */
  async #connectOnceKnown(): Promise<void> {
    try {
      this.#sessions = (await this.#parts.sessionCheck.kind()) === "transaction-pooler" ? "no" : "yes";
    } catch (thrown) {
      // Checked again at the next attempt to connect.
      this.#sessions = "unknown";
      this.#missedSome = true;
      this.#report(interpretError(thrown, `LISTEN on channel "${this.#parts.channel}"`));
      this.#scheduleReconnect();
      return;
    }
    if (this.#sessions === "no" || this.#closed || !this.#parts.wanted()) return;
    // Its owners went on without notifications meanwhile: once listening, they catch up.
    this.#missedSome = true;
    void this.connect();
  }

  /** The connection failed or ended: forget it and reconnect while it is wanted. */
  #lost(client: pg.Client, error: Error | undefined): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    clearInterval(this.#healthTimer);
    client.end().catch(() => undefined);
    if (this.#closed) return;
    this.#missedSome = true;
    try {
      this.#parts.onLost?.();
    } catch (thrown) {
      this.#report(coerceError(thrown));
    }
    this.#report(interpretError(error ?? new Error("the LISTEN connection ended"), `LISTEN on channel "${this.#parts.channel}"`));
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed || !this.#parts.wanted() || this.#retryTimer !== undefined) return;
    const delay = Math.min(this.#parts.maxDelayMs, this.#parts.minDelayMs * 2 ** Math.min(this.#failures, 30));
    this.#failures += 1;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      // When nobody wants it any more, the next connect() connects (and catches up).
      if (this.#parts.wanted()) void this.connect();
    }, delay);
    this.#retryTimer.unref();
  }

  /** Notices a connection that died silently (no RST) by querying it now and then. */
  #watch(client: pg.Client): void {
    if (this.#parts.healthCheckMs === 0) return;
    this.#healthTimer = setInterval(() => {
      client.query("SELECT 1").catch((thrown: unknown) => this.#lost(client, coerceError(thrown)));
    }, this.#parts.healthCheckMs);
    this.#healthTimer.unref();
  }

  #report(error: Error): void {
    try {
      this.#parts.onError(error);
    } catch {
      // A failing error reporter must not break the connection's handling.
    }
  }
}
