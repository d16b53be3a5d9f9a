import { randomBytes } from "node:crypto";
import pg from "pg";
import { closeWithin, dropConnection } from "../close-within";
import { interpretError } from "../interpret-error";
import type { DriverWarning, WarningListener } from "./driver-warning";

/**
 * What a connection string leads to, as far as session state goes:
 *
 * - `"direct"`: PostgreSQL itself (or a proxy that passes the session on
 *   as it is): LISTEN and session advisory locks work;
 * - `"session-pooler"`: a pooler that gives each client one server
 *   connection for its whole session (PgBouncer's `pool_mode=session`):
 *   they work too;
 * - `"transaction-pooler"`: a pooler that hands each transaction to any
 *   server connection (PgBouncer's `pool_mode=transaction`): a LISTEN is
 *   left on a server connection the client no longer holds, and a session
 *   lock on one it may hand to someone else, so neither can be used.
 */
export type SessionKind = "direct" | "session-pooler" | "transaction-pooler";

/** What {@link SessionCheck.firstLook} knows after one round trip. */
export type FirstLook = "direct" | "pooler";

/** Options of {@link SessionCheck}. */
export interface SessionCheckOptions {
  readonly connectionString: string;
  /** `application_name` of the check's two short connections. */
  readonly applicationName: string;
  /** How long to wait for the test notification through a pooler, in ms. Default 1 000. */
  readonly notificationTimeoutMs?: number;
  /** How long each connection of the check may take to open, in ms. Default 10 000. */
  readonly connectTimeoutMs?: number;
  /** Told once when the check finds a transaction pooler (code `STINT_NO_SESSIONS`). */
  readonly onWarning: WarningListener;
}

const DEFAULT_NOTIFICATION_TIMEOUT_MS = 1_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Finds out once whether a connection string keeps sessions, for the
 * features that need one (LISTEN for wake-ups and completion hints, the
 * leader's advisory lock). The wake-ups, the completion hints and the
 * leader lock of one registration share one check.
 *
 * A connection whose backend pid is the one the server announced at
 * startup talks to PostgreSQL itself: `"direct"`, decided in one round
 * trip. A pooler announces a pid of its own; then a second connection
 * sends a NOTIFY to a channel the first one LISTENs on, and the check
 * waits for it (at most `notificationTimeoutMs`): it arrives through a
 * session pooler, never through a transaction pooler, where the LISTEN
 * stays behind on a server connection the client no longer holds.
 *
 * Finding a transaction pooler is said once (`onWarning`, code
 * `STINT_NO_SESSIONS`), with what stint does instead — workers poll, waits
 * poll, the maintenance leader holds a lease row — and the setting that
 * brings sessions back. A check that cannot connect rejects (with the
 * driver's interpreted error) and is tried again by the next caller.
 *
 * ### SQL
 * ```sql
 * SELECT pg_backend_pid() AS pid               -- compared with the pid announced at startup
 * LISTEN "stint_session_check_<random>"        -- only through a pooler
 * SELECT pg_notify('stint_session_check_<random>', '')   -- on the second connection
 * ```
 *
 * @example
 * ```ts
 * const check = new SessionCheck({ connectionString, applicationName: "stint:check", onWarning: emitProcessWarning });
 * if ((await check.kind()) === "transaction-pooler") console.warn("LISTEN cannot work here; polling");
 * ```
 */
export class SessionCheck {
  readonly #options: SessionCheckOptions;
  #firstLook: Promise<FirstLook> | undefined;
  #result: Promise<SessionKind> | undefined;

  constructor(options: SessionCheckOptions) {
    this.#options = options;
  }

  /** Where the check connects (the connection string it was given). */
  get connectionString(): string {
    return this.#options.connectionString;
  }

  /** The kind of connection, found out on the first call; later calls share it. */
  kind(): Promise<SessionKind> {
    this.#start();
    return this.#result!;
  }

  /**
   * The check's first step, known after one round trip: `"direct"` (then
   * {@link kind} is too), or `"pooler"` while the notification test that
   * tells a session pooler from a transaction pooler may take up to
   * `notificationTimeoutMs` more. Lets a caller that must not wait that
   * long go on, and act on {@link kind} when it comes.
   */
  firstLook(): Promise<FirstLook> {
    this.#start();
    return this.#firstLook!;
  }

  #start(): void {
    if (this.#result !== undefined) return;
    let looked!: (look: FirstLook) => void;
    let lookFailed!: (error: Error) => void;
    this.#firstLook = new Promise<FirstLook>((resolve, reject) => {
      looked = resolve;
      lookFailed = reject;
    });
    this.#result = this.#check(looked).catch((thrown: unknown) => {
      this.#result = undefined;
      this.#firstLook = undefined;
      const error = interpretError(thrown, "check whether the database keeps sessions");
      lookFailed(error);
      throw error;
    });
    // Whoever asks gets the outcome; a step nobody asked for must not count as an unhandled rejection.
    this.#firstLook.catch(() => undefined);
    this.#result.catch(() => undefined);
  }

  async #check(looked: (look: FirstLook) => void): Promise<SessionKind> {
    const listener = this.#client();
    try {
      await listener.connect();
      const { rows } = await listener.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      const announced = (listener as unknown as { processID?: unknown }).processID;
      const direct = typeof announced === "number" && rows[0]?.pid === announced;
      looked(direct ? "direct" : "pooler");
      if (direct) return "direct";
      if (await this.#notificationArrives(listener)) return "session-pooler";
      this.#options.onWarning(noSessions(this.#options.connectionString));
      return "transaction-pooler";
    } finally {
      await end(listener);
    }
  }

  /** LISTENs on `listener`, NOTIFYs from a second connection, and waits for the notification. */
  async #notificationArrives(listener: pg.Client): Promise<boolean> {
    const channel = `stint_session_check_${randomBytes(8).toString("hex")}`;
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    listener.on("notification", (message) => {
      if (message.channel === channel) arrived();
    });
    await listener.query(`LISTEN ${channel}`);
    const sender = this.#client();
    try {
      await sender.connect();
      await sender.query("SELECT pg_notify($1, '')", [channel]);
    } finally {
      await end(sender);
    }
    const waitMs = this.#options.notificationTimeoutMs ?? DEFAULT_NOTIFICATION_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
    try {
      return await Promise.race([arrival.then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  #client(): pg.Client {
    const client = new pg.Client({
      connectionString: this.#options.connectionString,
      application_name: this.#options.applicationName,
      connectionTimeoutMillis: this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      query_timeout: this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    });
    client.on("error", () => undefined);
    return client;
  }
}

function noSessions(connectionString: string): DriverWarning {
  return {
    code: "STINT_NO_SESSIONS",
    message:
      `${addressOf(connectionString)} hands each transaction to any server connection, as a transaction pooler ` +
      `(PgBouncer in pool_mode=transaction) does, so LISTEN/NOTIFY and session locks cannot work through it: ` +
      `idle workers poll for new jobs (at most every poll interval) instead of being woken, waits for a job poll, ` +
      `and the maintenance leader holds a lease row instead of an advisory lock. ` +
      `Set STINT_SESSION_DATABASE_URL (the sessionConnectionString option) to a direct connection, or a session-mode pool, for wake-ups.`,
  };
}

/** `host:port` of a connection string, without its credentials. */
function addressOf(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `The database at ${url.hostname}${url.port === "" ? "" : `:${url.port}`}`;
  } catch {
    return "The database";
  }
}

async function end(client: pg.Client): Promise<void> {
  await closeWithin(
    client.end().catch(() => undefined),
    () => dropConnection(client),
  );
}
