import { randomUUID } from "node:crypto";
import {
  ConfigError,
  ErrorCode,
  errorCodeOf,
  InfrastructureError,
  type JobEventFilter,
  type JobEventGap,
  type JobEventHandlers,
  type JobEventSource,
  type JobEventSubscription,
} from "@stint/core";
import { applicationName, coerceError } from "@stint/core/internal";
import { checkJobEventSubscription, gapConcerns, matchesJobEventFilter } from "@stint/core/driver";
import { assertSqlIdentifier } from "@stint/core/driver";
import type { SessionCheck } from "../connection/session-check";
import { ListenConnection } from "../listen-connection";
import type { SessionQuery } from "../queries/register-waiters";
import { DEFAULT_SCHEMA } from "../schema/default-schema";
import { checkSessionClientOptions, millisecondsOption, warnAbout, type SessionClientOptions } from "../session-client-options";
import { jobEventChannel } from "./job-event-channel";
import { removeListeners, writeListeners, type ListenerInterest } from "./job-event-listeners";
import { parseJobEventPayload } from "./parse-job-event-payload";
import { settleWithin } from "../close-within";

/** Options of {@link PostgresJobEvents}. */
export interface PostgresJobEventsOptions extends SessionClientOptions {
  /** First delay before reconnecting after the connection dropped; doubles per failure. Default 100. */
  readonly reconnectMinDelayMs?: number;
  /** Longest delay between reconnection attempts. Default 10 000. */
  readonly reconnectMaxDelayMs?: number;
  /** How often a `SELECT 1` checks the listening connection; `0` for never. Default 30 000. */
  readonly healthCheckIntervalMs?: number;
  /** How often this process's `job_event_listeners` row is refreshed. Default 30 000. */
  readonly refreshIntervalMs?: number;
}

/** One `subscribe` call. */
interface Subscriber {
  /** Its row's name in `job_event_listeners`. */
  readonly listener: string;
  readonly filter: JobEventFilter;
  readonly handlers: JobEventHandlers;
}

const OPTION_KEYS = ["reconnectMinDelayMs", "reconnectMaxDelayMs", "healthCheckIntervalMs", "refreshIntervalMs"];
/** How long `close` waits for this process's listener row to be deleted before it ends the connection anyway. */
const CLOSE_CLEANUP_MS = 1_000;

/**
 * Job events from every process that uses the database, over LISTEN/NOTIFY.
 * All the subscriptions of a process share one dedicated connection
 * (`application_name` `stint:events:<process identity>` unless given one),
 * opened by the first `subscribe` and closed when the last one ends.
 *
 * Each subscription registers what it wants (queues, types) as a row of
 * `job_event_listeners` (migration 17), on that connection, after its
 * LISTEN; the process refreshes its rows every `refreshIntervalMs` (they
 * lapse after three times that); `subscribe` resolves once the row is written, so
 * every state change made by a statement that runs afterwards is sent.
 * Every statement that changes a job's state calls `notify_job_events`,
 * which sends nothing while no live row wants the job's queue and event
 * type: nobody listening costs each statement one look at that table.
 *
 * When the connection drops, subscribers hear `onGap({ reason: "unavailable" })`;
 * it reconnects with a doubling delay, writes the row again (an UNLOGGED
 * table loses its rows in a crash) and tells them `onGap({ reason: "reconnected" })`:
 * events in between were missed. Behind a transaction pooler nothing can
 * listen: `subscribe` resolves and reports `unavailable` at once.
 *
 * @example
 * ```ts
 * const events = new PostgresJobEvents({ connectionString: process.env.DATABASE_URL! });
 * const sub = await events.subscribe({ queues: ["emails"] }, {
 *   onEvent: (event) => console.log(event.type, event.jobId),
 *   onGap: (gap) => console.warn("re-read state:", gap.reason),
 * });
 * await sub.close();
 * await events.close();
 * ```
 */
export class PostgresJobEvents implements JobEventSource {
  readonly #schema: string;
  readonly #channel: string;
  readonly #connectionString: string;
  readonly #applicationName: string;
  readonly #onError: (error: Error) => void;
  readonly #minDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #healthCheckMs: number;
  readonly #refreshMs: number;
  readonly #sessionCheck: SessionCheck;
  /** The start of this process's row names in `job_event_listeners`. */
  readonly #listener = `${applicationName("events")}:${randomUUID()}:`;
  #subscriptions = 0;
  readonly #subscribers = new Set<Subscriber>();
  #connection: ListenConnection | undefined;
  #refreshTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: PostgresJobEventsOptions) {
    const checked = checkSessionClientOptions("jobEvents", options, applicationName("events"), OPTION_KEYS);
    this.#applicationName = checked.applicationName;
    this.#sessionCheck = checked.sessionCheck;
    this.#connectionString = options.connectionString;
    this.#schema = assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema");
    this.#channel = jobEventChannel(this.#schema);
    this.#onError = options.onError ?? warnAbout("STINT_JOB_EVENTS_ERROR", "The LISTEN connection for job events failed");
    this.#minDelayMs = millisecondsOption("reconnectMinDelayMs", options.reconnectMinDelayMs, 100, 1);
    this.#maxDelayMs = millisecondsOption("reconnectMaxDelayMs", options.reconnectMaxDelayMs, 10_000, this.#minDelayMs);
    this.#healthCheckMs = millisecondsOption("healthCheckIntervalMs", options.healthCheckIntervalMs, 30_000);
    this.#refreshMs = millisecondsOption("refreshIntervalMs", options.refreshIntervalMs, 30_000, 100);
  }

  /** The channel it listens on. */
  get channel(): string {
    return this.#channel;
  }

  /** True while the listening connection is up. */
  get listening(): boolean {
    return this.#connection?.listening ?? false;
  }

  /** How many subscriptions are open. */
  get subscribers(): number {
    return this.#subscribers.size;
  }

  /**
   * Starts a subscription; resolves once its row is registered, so every
   * statement that runs afterwards sends it what it asks for. Rejects on a
   * bad filter or handler, or when the database refuses the connection for
   * a reason other than being out of reach (then `onGap` says `unavailable`).
   */
  async subscribe(filter: JobEventFilter, handlers: JobEventHandlers): Promise<JobEventSubscription> {
    if (this.#closed) throw new ConfigError("jobEvents", "is closed; create a new one");
    checkJobEventSubscription(filter, handlers);
    this.#subscriptions += 1;
    const subscriber: Subscriber = Object.freeze({
      listener: `${this.#listener}${this.#subscriptions}`,
      filter: Object.freeze({
        ...(filter.queues === undefined ? {} : { queues: [...filter.queues] }),
        ...(filter.types === undefined ? {} : { types: [...filter.types] }),
      }),
      handlers,
    });
    this.#subscribers.add(subscriber);
    const connection = (this.#connection ??= this.#open());
    const failure = await connection.connect();
    if (failure !== undefined && errorCodeOf(failure) !== ErrorCode.Infrastructure) {
      await this.#unsubscribe(subscriber);
      throw failure;
    }
    if (failure === undefined && connection === this.#connection && connection.listening) {
      await this.#writeInterest(connection).catch(async (thrown: unknown) => {
        await this.#unsubscribe(subscriber);
        throw coerceError(thrown);
      });
    } else {
      // Behind a transaction pooler, or with the database out of reach: the subscriber polls until a reconnection.
      this.#gapFor(subscriber, {
        reason: "unavailable",
        error: failure ?? new InfrastructureError("job events cannot be listened for on this connection (a transaction pooler?)"),
      });
    }
    let closed = false;
    return Object.freeze({
      close: async (): Promise<void> => {
        if (closed) return;
        closed = true;
        await this.#unsubscribe(subscriber);
      },
    });
  }

  /** Ends every subscription, deletes this process's listener row (waiting at most a second) and ends the connection. Bounded. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscribers.clear();
    await this.#disconnect();
  }

  #open(): ListenConnection {
    const connection: ListenConnection = new ListenConnection({
      connectionString: this.#connectionString,
      applicationName: this.#applicationName,
      channel: this.#channel,
      minDelayMs: this.#minDelayMs,
      maxDelayMs: this.#maxDelayMs,
      healthCheckMs: this.#healthCheckMs,
      onNotification: (payload) => this.#dispatch(payload),
      onListening: async (missedSome) => {
        if (connection !== this.#connection) return;
        await this.#writeInterest(connection);
        this.#startRefreshing(connection);
        if (missedSome) this.#gap({ reason: "reconnected" });
      },
      onLost: () => {
        if (connection === this.#connection)
          this.#gap({ reason: "unavailable", error: new InfrastructureError("the LISTEN connection for job events was lost") });
      },
      onError: (error) => this.#report(error),
      wanted: () => connection === this.#connection && this.#subscribers.size > 0,
      sessionCheck: this.#sessionCheck,
    });
    return connection;
  }

  /** What each open subscription wants: `null` for all. */
  #interests(): ListenerInterest[] {
    return [...this.#subscribers].map(({ listener, filter }) => ({ listener, queues: filter.queues ?? null, kinds: filter.types ?? null }));
  }

  async #writeInterest(connection: ListenConnection): Promise<void> {
    await writeListeners(this.#query(connection), this.#schema, { prefix: this.#listener, interests: this.#interests(), ttlMs: this.#refreshMs * 3 });
  }

  #startRefreshing(connection: ListenConnection): void {
    clearInterval(this.#refreshTimer);
    this.#refreshTimer = setInterval(() => {
      if (connection !== this.#connection || !connection.listening) return;
      this.#writeInterest(connection).catch((thrown: unknown) => this.#report(coerceError(thrown)));
    }, this.#refreshMs);
    this.#refreshTimer.unref();
  }

  async #unsubscribe(subscriber: Subscriber): Promise<void> {
    if (!this.#subscribers.delete(subscriber)) return;
    const connection = this.#connection;
    if (connection === undefined) return;
    // The last subscription ended: nobody needs the events, nor the connection.
    if (this.#subscribers.size === 0) return this.#disconnect();
    if (connection.listening) await this.#writeInterest(connection).catch((thrown: unknown) => this.#report(coerceError(thrown)));
  }

  async #disconnect(): Promise<void> {
    clearInterval(this.#refreshTimer);
    this.#refreshTimer = undefined;
    const connection = this.#connection;
    this.#connection = undefined;
    if (connection === undefined) return;
    if (connection.listening) await settleWithin(removeListeners(this.#query(connection), this.#schema, this.#listener), CLOSE_CLEANUP_MS);
    await connection.close();
  }

  #dispatch(payload: string): void {
    const notice = parseJobEventPayload(payload);
    if (notice === undefined) {
      this.#report(new InfrastructureError(`a job-event notification could not be read: ${payload.slice(0, 200)}`));
      return;
    }
    if (notice.kind === "summary") {
      this.#gap({ reason: "summarised", type: notice.type, queue: notice.queue, count: notice.count });
      return;
    }
    for (const subscriber of [...this.#subscribers]) {
      for (const event of notice.events) {
        if (matchesJobEventFilter(subscriber.filter, event)) this.#call(() => subscriber.handlers.onEvent(event));
      }
    }
  }

  #gap(gap: JobEventGap): void {
    for (const subscriber of [...this.#subscribers]) this.#gapFor(subscriber, gap);
  }

  #gapFor(subscriber: Subscriber, gap: JobEventGap): void {
    if (gapConcerns(subscriber.filter, gap)) this.#call(() => subscriber.handlers.onGap?.(gap));
  }

  #call(handler: () => void): void {
    try {
      handler();
    } catch (thrown) {
      this.#report(coerceError(thrown));
    }
  }

  #query(connection: ListenConnection): SessionQuery {
    return (text, values) => connection.query(text, values);
  }

  #report(error: Error): void {
    try {
      this.#onError(error);
    } catch {
      // A failing error reporter must not break the events.
    }
  }
}
