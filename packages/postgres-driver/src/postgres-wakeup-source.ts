import { ConfigError, ErrorCode, errorCodeOf } from "@stint/core";
import { applicationName, coerceError } from "@stint/core/internal";
import { assertSqlIdentifier, type WakeupListener, type WakeupSource } from "@stint/core/driver";
import { CANCEL_NOTICE_PREFIX, parseCancelNotice } from "./cancel-notice";
import { ListenConnection } from "./listen-connection";
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

interface Subscriber extends WakeupListener {
  readonly queues: ReadonlySet<string>;
}

const OPTION_KEYS = ["reconnectMinDelayMs", "reconnectMaxDelayMs", "healthCheckIntervalMs"];

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
 * each of its queues, since notifications may have been missed meanwhile;
 * the moment it sees the connection drop, it calls their `onInterrupted`.
 * A notification whose payload is a cancel notice (`cancelJob` sends one
 * when it cancels a running attempt; see `cancelNotice`) calls, instead,
 * the `onCancelled` of those subscribed to the attempt's queue.
 * A hint only: workers poll as well. Connection failures go to `onError`;
 * `subscribe` rejects only when the first attempt fails in a way retrying
 * will not fix (a wrong password, a missing database).
 *
 * @example
 * ```ts
 * const wakeups = new PostgresWakeupSource({ connectionString: process.env.DATABASE_URL! });
 * const subscription = await wakeups.subscribe(["send-invoice"], { onWake: () => gate.open() });
 * // … at shutdown:
 * await subscription.close();
 * await wakeups.close();
 * ```
 */
export class PostgresWakeupSource implements WakeupSource {
  readonly #channel: string;
  readonly #onError: (error: Error) => void;
  readonly #connection: ListenConnection;
  readonly #subscribers = new Set<Subscriber>();
  #closed = false;

  constructor(options: PostgresWakeupSourceOptions) {
    const { applicationName: name, sessionCheck } = checkSessionClientOptions("wakeupSource", options, applicationName("listen"), OPTION_KEYS);
    this.#channel = wakeupChannel(assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema"));
    this.#onError = options.onError ?? warnAbout("STINT_WAKEUP_ERROR", "The LISTEN connection for wake-ups failed");
    const minDelayMs = millisecondsOption("reconnectMinDelayMs", options.reconnectMinDelayMs, 100, 1);
    this.#connection = new ListenConnection({
      connectionString: options.connectionString,
      applicationName: name,
      channel: this.#channel,
      minDelayMs,
      maxDelayMs: millisecondsOption("reconnectMaxDelayMs", options.reconnectMaxDelayMs, 10_000, minDelayMs),
      healthCheckMs: millisecondsOption("healthCheckIntervalMs", options.healthCheckIntervalMs, 30_000),
      onNotification: (queue) => this.#dispatch(queue),
      onListening: (missedSome) => {
        if (!missedSome) return;
        for (const subscriber of [...this.#subscribers]) for (const queue of subscriber.queues) this.#wake(subscriber, queue);
      },
      onLost: () => {
        for (const subscriber of [...this.#subscribers]) this.#tell(() => subscriber.onInterrupted?.());
      },
      onError: (error) => this.#report(error),
      wanted: () => this.#subscribers.size > 0,
      sessionCheck,
    });
  }

  /** The channel it listens on. */
  get channel(): string {
    return this.#channel;
  }

  /** True while the LISTEN connection is up. */
  get listening(): boolean {
    return this.#connection.listening;
  }

  async subscribe(queues: readonly string[], listener: WakeupListener): Promise<{ close(): Promise<void> }> {
    if (this.#closed) throw new ConfigError("wakeupSource", "is closed; create a new one");
    if (!Array.isArray(queues) || queues.length === 0 || !queues.every((queue) => typeof queue === "string" && queue !== "")) {
      throw new ConfigError("queues", "must be a non-empty list of queue names");
    }
    if (typeof listener !== "object" || listener === null) throw new ConfigError("listener", "must be an object with an onWake function");
    const { onWake, onInterrupted, onCancelled } = listener;
    if (typeof onWake !== "function") throw new ConfigError("onWake", "must be a function");
    if (onInterrupted !== undefined && typeof onInterrupted !== "function") throw new ConfigError("onInterrupted", "must be a function");
    if (onCancelled !== undefined && typeof onCancelled !== "function") throw new ConfigError("onCancelled", "must be a function");
    const subscriber: Subscriber = Object.freeze({
      queues: new Set(queues),
      onWake,
      ...(onInterrupted === undefined ? {} : { onInterrupted }),
      ...(onCancelled === undefined ? {} : { onCancelled }),
    });
    this.#subscribers.add(subscriber);
    const failure = await this.#connection.connect();
    if (failure !== undefined && errorCodeOf(failure) !== ErrorCode.Infrastructure) {
      this.#subscribers.delete(subscriber);
      throw failure;
    }
    return Object.freeze({
      close: (): Promise<void> => {
        this.#subscribers.delete(subscriber);
        return Promise.resolve();
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
    await this.#connection.close();
  }

  #dispatch(payload: string): void {
    if (payload.startsWith(CANCEL_NOTICE_PREFIX)) return this.#dispatchCancel(payload);
    for (const subscriber of [...this.#subscribers]) if (subscriber.queues.has(payload)) this.#wake(subscriber, payload);
  }

  #dispatchCancel(payload: string): void {
    const attempt = parseCancelNotice(payload);
    if (attempt === undefined) return;
    for (const subscriber of [...this.#subscribers]) {
      const { onCancelled } = subscriber;
      if (onCancelled !== undefined && subscriber.queues.has(attempt.queue)) this.#tell(() => onCancelled(attempt));
    }
  }

  #wake(subscriber: Subscriber, queue: string): void {
    this.#tell(() => subscriber.onWake(queue));
  }

  /** Calls a subscriber's callback; what it throws or rejects with goes to `onError`. */
  #tell(callback: () => unknown): void {
    try {
      const result: unknown = callback();
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
