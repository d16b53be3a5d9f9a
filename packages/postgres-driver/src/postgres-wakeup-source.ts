import {
  applicationName,
  assertSqlIdentifier,
  ConfigError,
  coerceError,
  ErrorCode,
  errorCodeOf,
  rejectUnknownOptions,
  type WakeupSource,
} from "@stint/core";
import pg from "pg";
import { closeWithin, dropConnection } from "./close-within";
import { interpretError } from "./interpret-error";
import { DEFAULT_SCHEMA } from "./schema/default-schema";
import { checkSessionClientOptions, millisecondsOption, warnAbout, type SessionClientOptions } from "./session-client-options";
import { wakeupChannel } from "./wakeup-channel";

/** Options of {@link PostgresWakeupSource}. */
export interface PostgresWakeupSourceOptions extends SessionClientOptions {
  /** First delay before reconnecting after the connection dropped; doubles per failure. Default 100. */
  readonly reconnectMinDelayMs?: number;
  /** Longest delay between reconnection attempts. Default 10 000. */
  readonly reconnectMaxDelayMs?: number;
  /**
   * How often a `SELECT 1` checks that the listening connection still works
   * (a check that takes longer than this, or 10 s, fails it); `0` for never.
   * Default 30 000.
   */
  readonly healthCheckIntervalMs?: number;
}

interface Subscriber {
  readonly queues: ReadonlySet<string>;
  readonly onWake: (queue: string) => void;
}

const OPTION_KEYS = [
  "connectionString",
  "schema",
  "applicationName",
  "onError",
  "reconnectMinDelayMs",
  "reconnectMaxDelayMs",
  "healthCheckIntervalMs",
];
/** Connection and query timeout of the listening connection. */
const TIMEOUT_MS = 10_000;

/**
 * Wake-ups over LISTEN/NOTIFY: one dedicated `pg.Client` (never from a
 * pool, never inside a transaction, `application_name`
 * `stint:listen:<process identity>` unless given one)
 * listens on the schema's channel (see `wakeupChannel`), and each
 * notification whose payload is a queue someone subscribed to calls their
 * `onWake(queue)`. Migration 2's trigger notifies when due jobs are
 * inserted; `retryJob` and `retryDeadJobs` notify too.
 *
 * Lazy: nothing connects until the first `subscribe`, which resolves once
 * the LISTEN is in place. When the connection drops, it reconnects with a
 * doubling delay (capped), then calls every subscriber's `onWake` once for
 * each of its queues, since notifications may have been missed meanwhile.
 * A hint only: workers poll as well. Connection failures go to `onError`;
 * `subscribe` rejects only when the first attempt fails in a way retrying
 * will not fix (a wrong password, a missing database).
 *
 * @example
 * ```ts
 * const wakeups = new PostgresWakeupSource({ connectionString: process.env.DATABASE_URL! });
 * const subscription = await wakeups.subscribe(["send-invoice"], () => gate.open());
 * // … at shutdown:
 * await subscription.close();
 * await wakeups.close();
 * ```
 */
export class PostgresWakeupSource implements WakeupSource {
  readonly #connectionString: string;
  readonly #applicationName: string;
  readonly #channel: string;
  readonly #onError: (error: Error) => void;
  readonly #minDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #healthCheckMs: number;
  readonly #subscribers = new Set<Subscriber>();
  #client: pg.Client | undefined;
  #connecting: Promise<Error | undefined> | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #healthTimer: NodeJS.Timeout | undefined;
  #failures = 0;
  #missedSome = false;
  #closed = false;

  constructor(options: PostgresWakeupSourceOptions) {
    this.#applicationName = checkSessionClientOptions("wakeupSource", options, applicationName("listen"));
    rejectUnknownOptions("wakeupSource", options, OPTION_KEYS);
    this.#connectionString = options.connectionString;
    this.#channel = wakeupChannel(assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema"));
    this.#onError = options.onError ?? warnAbout("STINT_WAKEUP_ERROR", "The LISTEN connection for wake-ups failed");
    this.#minDelayMs = millisecondsOption("reconnectMinDelayMs", options.reconnectMinDelayMs, 100, 1);
    this.#maxDelayMs = millisecondsOption("reconnectMaxDelayMs", options.reconnectMaxDelayMs, 10_000, this.#minDelayMs);
    this.#healthCheckMs = millisecondsOption("healthCheckIntervalMs", options.healthCheckIntervalMs, 30_000);
  }

  /** The channel it listens on. */
  get channel(): string {
    return this.#channel;
  }

  /** True while the LISTEN connection is up. */
  get listening(): boolean {
    return this.#client !== undefined;
  }

  async subscribe(queues: readonly string[], onWake: (queue: string) => void): Promise<{ close(): Promise<void> }> {
    if (this.#closed) throw new ConfigError("wakeupSource", "is closed; create a new one");
    if (!Array.isArray(queues) || queues.length === 0 || !queues.every((queue) => typeof queue === "string" && queue !== "")) {
      throw new ConfigError("queues", "must be a non-empty list of queue names");
    }
    if (typeof onWake !== "function") throw new ConfigError("onWake", "must be a function");
    const subscriber: Subscriber = Object.freeze({ queues: new Set(queues), onWake });
    this.#subscribers.add(subscriber);
    const failure = await this.#connect();
    if (failure !== undefined && errorCodeOf(failure) !== ErrorCode.Infrastructure) {
      this.#subscribers.delete(subscriber);
      throw failure;
    }
    return Object.freeze({
      close: async (): Promise<void> => {
        this.#subscribers.delete(subscriber);
      },
    });
  }

  /**
   * Stops listening and ends the connection; every subscription ends with
   * it. Bounded: a connection that does not end within a second is dropped.
   * Idempotent.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#subscribers.clear();
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

  /** Connects unless connected; resolves with the error of a failed attempt. */
  #connect(): Promise<Error | undefined> {
    if (this.#client !== undefined) return Promise.resolve(undefined);
    if (this.#connecting === undefined) {
      clearTimeout(this.#retryTimer);
      this.#retryTimer = undefined;
      this.#connecting = this.#open().finally(() => {
        this.#connecting = undefined;
      });
    }
    return this.#connecting;
  }

  async #open(): Promise<Error | undefined> {
    const client = new pg.Client({
      connectionString: this.#connectionString,
      application_name: this.#applicationName,
      keepAlive: true,
      connectionTimeoutMillis: TIMEOUT_MS,
      query_timeout: this.#healthCheckMs === 0 ? TIMEOUT_MS : Math.min(TIMEOUT_MS, this.#healthCheckMs),
    });
    client.on("error", (error) => this.#lost(client, error));
    client.on("end", () => this.#lost(client, undefined));
    client.on("notification", (message) => this.#dispatch(message));
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(this.#channel)}`);
    } catch (thrown) {
      await client.end().catch(() => undefined);
      const error = interpretError(thrown, `LISTEN on channel "${this.#channel}"`);
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
    if (this.#missedSome) {
      this.#missedSome = false;
      for (const subscriber of [...this.#subscribers]) for (const queue of subscriber.queues) this.#wake(subscriber, queue);
    }
    return undefined;
  }

  /** The connection failed or ended: forget it and reconnect while anyone listens. */
  #lost(client: pg.Client, error: Error | undefined): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    clearInterval(this.#healthTimer);
    client.end().catch(() => undefined);
    if (this.#closed) return;
    this.#missedSome = true;
    this.#report(interpretError(error ?? new Error("the LISTEN connection ended"), `LISTEN on channel "${this.#channel}"`));
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#subscribers.size === 0 || this.#retryTimer !== undefined) return;
    const delay = Math.min(this.#maxDelayMs, this.#minDelayMs * 2 ** Math.min(this.#failures, 30));
    this.#failures += 1;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      // With no one listening any more, the next subscribe connects (and catches up).
      if (this.#subscribers.size > 0) void this.#connect();
    }, delay);
    this.#retryTimer.unref();
  }

  /** Notices a connection that died silently (no RST) by querying it now and then. */
  #watch(client: pg.Client): void {
    if (this.#healthCheckMs === 0) return;
    this.#healthTimer = setInterval(() => {
      client.query("SELECT 1").catch((thrown: unknown) => this.#lost(client, coerceError(thrown)));
    }, this.#healthCheckMs);
    this.#healthTimer.unref();
  }

  #dispatch(message: pg.Notification): void {
    const queue = message.payload;
    if (message.channel !== this.#channel || queue === undefined) return;
    for (const subscriber of [...this.#subscribers]) if (subscriber.queues.has(queue)) this.#wake(subscriber, queue);
  }

  #wake(subscriber: Subscriber, queue: string): void {
    try {
      const result: unknown = subscriber.onWake(queue);
      if (result instanceof Promise) result.catch((thrown: unknown) => this.#report(coerceError(thrown)));
    } catch (thrown) {
      this.#report(coerceError(thrown));
    }
  }

  #report(error: Error): void {
    try {
      this.#onError(error);
    } catch {
      // A failing error reporter must not break the wake-ups.
    }
  }
}
