import { randomUUID } from "node:crypto";
import { ConfigError, ErrorCode, errorCodeOf } from "@stint/core";
import { applicationName, coerceError } from "@stint/core/internal";
import { assertSqlIdentifier, type JobCompletionSource, type JobWatch } from "@stint/core/driver";
import { completionChannel } from "./completion-channel";
import { IdBatcher } from "./id-batcher";
import { ListenConnection } from "./listen-connection";
import { isJobId } from "./queries/job-row";
import { findBusyJobs, registerWaiters, removeWaiters, type SessionQuery } from "./queries/register-waiters";
import { DEFAULT_SCHEMA } from "./schema/default-schema";
import { checkSessionClientOptions, millisecondsOption, warnAbout, type SessionClientOptions } from "./session-client-options";
import type { SessionCheck } from "./connection/session-check";
import { settleWithin } from "./close-within";

/** Options of {@link PostgresCompletionSource}. */
export interface PostgresCompletionSourceOptions extends SessionClientOptions {
  /** First delay before reconnecting after the connection dropped; doubles per failure. Default 100. */
  readonly reconnectMinDelayMs?: number;
  /** Longest delay between reconnection attempts. Default 10 000. */
  readonly reconnectMaxDelayMs?: number;
  /** How often a `SELECT 1` checks the listening connection; `0` for never. Default 30 000. */
  readonly healthCheckIntervalMs?: number;
}

/** One `watch` call: its own hint, so that the same function may watch twice. */
interface Watcher {
  readonly onHint: () => void;
}

const OPTION_KEYS = ["reconnectMinDelayMs", "reconnectMaxDelayMs", "healthCheckIntervalMs"];
/** First look again after a registration found the job's row being changed; doubles up to the last, which repeats. */
const FIRST_RECHECK_MS = 20;
const LAST_RECHECK_MS = 1_280;
/** How long `close` waits for this source's `job_waiters` rows to be deleted before it ends the connection anyway. */
const CLOSE_CLEANUP_MS = 1_000;

/**
 * Completion hints for `client.waitFor` over LISTEN/NOTIFY. All the waits
 * of a store share one dedicated connection (`application_name`
 * `stint:await:<process identity>` unless given one), opened by the first
 * `watch` and closed when the last wait ends.
 *
 * A wait registers its job in `job_waiters` (migration 8) on that
 * connection, after its LISTEN; every statement that finishes jobs calls
 * `notify_awaited`, which announces the finished jobs found there on
 * `stint_done_<schema>` in the same transaction — nobody waiting, no
 * NOTIFY. `notify_awaited` reads `job_waiters` on a snapshot taken after
 * the statement's update, so the one finish it can miss is one whose
 * update already held the job's row when the registration committed: the
 * registration then sees the row's `xmax` set and looks at the row again,
 * 20 ms later and doubling up to 1.28 s, for as long as it is held and
 * watched; once it is free, its waiters get a hint. A hint only: waiters
 * also poll.
 *
 * When the connection drops it reconnects with a doubling delay, registers
 * every watched job again (an UNLOGGED table loses its rows in a crash)
 * and hints every waiter, since notifications may have been missed.
 *
 * @example
 * ```ts
 * const completions = new PostgresCompletionSource({ connectionString: process.env.DATABASE_URL! });
 * const store = new PostgresJobStore({ db, completions });
 * const result = await new JobClient(store).waitFor("812");
 * await completions.close();
 * ```
 */
export class PostgresCompletionSource implements JobCompletionSource {
  readonly #schema: string;
  readonly #channel: string;
  readonly #connectionString: string;
  readonly #applicationName: string;
  readonly #onError: (error: Error) => void;
  readonly #minDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #healthCheckMs: number;
  readonly #sessionCheck: SessionCheck;
  /** This source's name in `job_waiters`. */
  readonly #waiter = `${applicationName("await")}:${randomUUID()}`.slice(0, 200);
  readonly #jobs = new Map<string, Set<Watcher>>();
  /** Registrations on the current connection, by job id. */
  readonly #registrations = new Map<string, Promise<void>>();
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Registrations and removals, each many jobs per statement on the current connection. */
  readonly #registering = new IdBatcher((ids) => this.#registerNow(ids));
  readonly #removing = new IdBatcher((ids) => this.#removeNow(ids));
  #connection: ListenConnection | undefined;
  #closed = false;

  constructor(options: PostgresCompletionSourceOptions) {
    const checked = checkSessionClientOptions("completionSource", options, applicationName("await"), OPTION_KEYS);
    this.#applicationName = checked.applicationName;
    this.#sessionCheck = checked.sessionCheck;
    this.#connectionString = options.connectionString;
    this.#schema = assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema");
    this.#channel = completionChannel(this.#schema);
    this.#onError = options.onError ?? warnAbout("STINT_COMPLETIONS_ERROR", "The LISTEN connection for job completions failed");
    this.#minDelayMs = millisecondsOption("reconnectMinDelayMs", options.reconnectMinDelayMs, 100, 1);
    this.#maxDelayMs = millisecondsOption("reconnectMaxDelayMs", options.reconnectMaxDelayMs, 10_000, this.#minDelayMs);
    this.#healthCheckMs = millisecondsOption("healthCheckIntervalMs", options.healthCheckIntervalMs, 30_000);
  }

  /** The channel it listens on. */
  get channel(): string {
    return this.#channel;
  }

  /** True while the listening connection is up. */
  get listening(): boolean {
    return this.#connection?.listening ?? false;
  }

  /** How many jobs are watched now. */
  get watchedJobs(): number {
    return this.#jobs.size;
  }

  async watch(jobId: string, onHint: () => void): Promise<JobWatch> {
    if (this.#closed) throw new ConfigError("completionSource", "is closed; create a new one");
    if (!isJobId(jobId)) throw new ConfigError("jobId", `must be a job id (a positive integer as a string), got ${JSON.stringify(jobId)}`);
    if (typeof onHint !== "function") throw new ConfigError("onHint", "must be a function");
    const watcher: Watcher = Object.freeze({ onHint });
    const watchers = this.#jobs.get(jobId) ?? new Set<Watcher>();
    this.#jobs.set(jobId, watchers);
    watchers.add(watcher);
    const connection = (this.#connection ??= this.#open());
    const failure = await connection.connect();
    if (failure !== undefined && errorCodeOf(failure) !== ErrorCode.Infrastructure) {
      await this.#unwatch(jobId, watcher);
      throw failure;
    }
    // Behind a transaction pooler nothing listens, and the wait only polls.
    if (failure === undefined && connection === this.#connection && connection.listening) await this.#register([jobId]);
    let closed = false;
    return Object.freeze({
      close: async (): Promise<void> => {
        if (closed) return;
        closed = true;
        await this.#unwatch(jobId, watcher);
      },
    });
  }

  /**
   * Ends every watch, deletes this source's `job_waiters` rows (waiting at
   * most a second) and ends the connection. Bounded. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#jobs.clear();
    this.#registrations.clear();
    const connection = this.#connection;
    this.#connection = undefined;
    if (connection === undefined) return;
    if (connection.listening) {
      await settleWithin(removeWaiters(this.#query(connection), this.#schema, { waiter: this.#waiter }), CLOSE_CLEANUP_MS);
    }
    await connection.close();
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
        this.#registrations.clear();
        await this.#register([...this.#jobs.keys()]);
        if (missedSome) for (const jobId of [...this.#jobs.keys()]) this.#hint(jobId);
      },
      onError: (error) => this.#report(error),
      wanted: () => connection === this.#connection && this.#jobs.size > 0,
      sessionCheck: this.#sessionCheck,
    });
    return connection;
  }

  /** Registers the jobs not yet registered on the current connection; a failure is reported (a reconnection registers them again). */
  async #register(jobIds: readonly string[]): Promise<void> {
    const fresh = jobIds.filter((jobId) => !this.#registrations.has(jobId));
    if (fresh.length > 0) {
      const registration = this.#registering.add(fresh).catch((thrown: unknown) => {
        for (const jobId of fresh) if (this.#registrations.get(jobId) === registration) this.#registrations.delete(jobId);
        this.#report(coerceError(thrown));
      });
      for (const jobId of fresh) this.#registrations.set(jobId, registration);
    }
    await Promise.all(jobIds.map((jobId) => this.#registrations.get(jobId) ?? Promise.resolve()));
  }

  async #registerNow(jobIds: readonly string[]): Promise<void> {
    const connection = this.#connection;
    const ids = jobIds.filter((jobId) => this.#jobs.has(jobId));
    if (connection === undefined || !connection.listening || ids.length === 0) return;
    const { busy } = await registerWaiters(this.#query(connection), this.#schema, { waiter: this.#waiter, ids });
    this.#recheckLater(connection, busy, FIRST_RECHECK_MS);
  }

  async #removeNow(jobIds: readonly string[]): Promise<void> {
    const connection = this.#connection;
    // A job watched again meanwhile keeps its row.
    const ids = jobIds.filter((jobId) => !this.#jobs.has(jobId));
    if (connection === undefined || !connection.listening || ids.length === 0) return;
    await removeWaiters(this.#query(connection), this.#schema, { waiter: this.#waiter, ids });
  }

  /**
   * Looks again after `delayMs` at the rows of `jobIds` that were being changed, and hints the waiters
   * of those now free: the change committed (or rolled back) before the look, so their re-read sees it.
   * Rows still held are looked at again, the delay doubling up to a limit, for as long as they are watched.
   */
  #recheckLater(connection: ListenConnection, jobIds: readonly string[], delayMs: number): void {
    if (jobIds.length === 0 || this.#closed) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      const watched = jobIds.filter((jobId) => this.#jobs.has(jobId));
      // A connection that stopped listening registers every watch again once back, and rechecks from there.
      if (watched.length === 0 || !connection.listening) return;
      findBusyJobs(this.#query(connection), this.#schema, watched).then(
        (busy) => {
          const held = new Set(busy);
          for (const jobId of watched) if (!held.has(jobId)) this.#hint(jobId);
          this.#recheckLater(connection, busy, Math.min(delayMs * 2, LAST_RECHECK_MS));
        },
        (thrown: unknown) => this.#report(coerceError(thrown)),
      );
    }, delayMs);
    timer.unref();
    this.#timers.add(timer);
  }

  async #unwatch(jobId: string, watcher: Watcher): Promise<void> {
    const watchers = this.#jobs.get(jobId);
    if (watchers === undefined || !watchers.delete(watcher) || watchers.size > 0) return;
    this.#jobs.delete(jobId);
    const registration = this.#registrations.get(jobId);
    this.#registrations.delete(jobId);
    if (registration !== undefined) {
      await registration;
      await this.#removing.add([jobId]).catch((thrown: unknown) => this.#report(coerceError(thrown)));
    }
    // The last watch ended (and no new one began meanwhile): nobody needs the connection.
    const connection = this.#connection;
    if (connection === undefined || this.#jobs.size > 0) return;
    this.#connection = undefined;
    await connection.close();
  }

  #dispatch(payload: string): void {
    const ids = payload.split(",");
    // A payload that names no jobs is a hint for everyone.
    const named = ids.every((id) => isJobId(id));
    for (const jobId of named ? ids : [...this.#jobs.keys()]) this.#hint(jobId);
  }

  #hint(jobId: string): void {
    for (const watcher of [...(this.#jobs.get(jobId) ?? [])]) {
      try {
        watcher.onHint();
      } catch (thrown) {
        this.#report(coerceError(thrown));
      }
    }
  }

  #query(connection: ListenConnection): SessionQuery {
    return (text, values) => connection.query(text, values);
  }

  #report(error: Error): void {
    try {
      this.#onError(error);
    } catch {
      // A failing error reporter must not break the hints.
    }
  }
}
