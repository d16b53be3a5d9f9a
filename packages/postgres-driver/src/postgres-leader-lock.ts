import { applicationName, ConfigError, ErrorCode, errorCodeOf } from "@stint/core";
import { assertSqlIdentifier, rejectUnknownOptions, type LeaderLock } from "@stint/core/driver";
import pg from "pg";
import { advisoryLockKey } from "./advisory-lock-key";
import { closeWithin, dropConnection } from "./close-within";
import { interpretError } from "./interpret-error";
import { DEFAULT_SCHEMA } from "./schema/default-schema";
import { checkSessionClientOptions, millisecondsOption, warnAbout, type SessionClientOptions } from "./session-client-options";

/** Options of {@link PostgresLeaderLock}. */
export interface PostgresLeaderLockOptions extends SessionClientOptions {
  /** Which lock: processes that name the same schema and lock compete. Default `"maintenance"`. */
  readonly name?: string;
  /** How long the liveness check of a held lock may take before the connection counts as dead. Default 2 000. */
  readonly livenessTimeoutMs?: number;
}

const OPTION_KEYS = ["connectionString", "schema", "applicationName", "onError", "name", "livenessTimeoutMs"];
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Leader election with a session-level advisory lock
 * (`pg_try_advisory_lock`) on a dedicated `pg.Client` (never from a pool;
 * `application_name` `stint:leader:<process identity>` unless given one). The key is a 64-bit hash of
 * `stint:leader:<schema>:<name>`, so every process of one schema competes
 * for the same lock and the server releases it the moment the holder's
 * session ends — a crashed or partitioned leader is replaced without
 * waiting for a lease.
 *
 * Lazy: nothing connects until the first `tryAcquire`. The connection is
 * kept (also by processes that did not get the lock, to try again cheaply).
 * When it fails or ends, `held` turns false at once and the next
 * `tryAcquire` reconnects. `tryAcquire` on a held lock first checks the
 * connection with a `SELECT 1` bounded by `livenessTimeoutMs`, so a
 * connection that died silently is noticed. Connection failures make
 * `tryAcquire` resolve false (and go to `onError`); only errors retrying
 * will not fix (a wrong password) reject. Calls are run one at a time.
 *
 * ### SQL
 * ```sql
 * SELECT pg_try_advisory_lock($1::bigint) AS acquired  -- tryAcquire
 * SELECT 1                                             -- tryAcquire while held: liveness
 * SELECT pg_advisory_unlock($1::bigint)                -- release
 * ```
 *
 * @example
 * ```ts
 * const leader = new PostgresLeaderLock({ connectionString: process.env.DATABASE_URL!, schema: "stint" });
 * if (await leader.tryAcquire()) await rescue.runOnce();
 * // … at shutdown:
 * await leader.close();
 * ```
 */
export class PostgresLeaderLock implements LeaderLock {
  readonly #connectionString: string;
  readonly #applicationName: string;
  readonly #key: string;
  readonly #livenessTimeoutMs: number;
  readonly #onError: (error: Error) => void;
  #client: pg.Client | undefined;
  #held = false;
  #closed = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: PostgresLeaderLockOptions) {
    this.#applicationName = checkSessionClientOptions("leaderLock", options, applicationName("leader"));
    rejectUnknownOptions("leaderLock", options, OPTION_KEYS);
    this.#connectionString = options.connectionString;
    const schema = assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema");
    const name = options.name ?? "maintenance";
    if (typeof name !== "string" || name === "" || name.length > 200) {
      throw new ConfigError("name", "must be a string of 1 to 200 characters");
    }
    this.#key = advisoryLockKey(`stint:leader:${schema}:${name}`);
    this.#livenessTimeoutMs = millisecondsOption("livenessTimeoutMs", options.livenessTimeoutMs, 2_000, 1);
    this.#onError = options.onError ?? warnAbout("STINT_LEADER_LOCK_ERROR", "The leader lock's connection failed");
  }

  /** The advisory lock key (a signed 64-bit integer in decimal), as found in `pg_locks`. */
  get key(): string {
    return this.#key;
  }

  get held(): boolean {
    return this.#held;
  }

  tryAcquire(): Promise<boolean> {
    return this.#serially(() => this.#tryAcquire());
  }

  release(): Promise<void> {
    return this.#serially(() => this.#release());
  }

  /** Releases the lock for good: a later `tryAcquire` rejects. Idempotent. */
  close(): Promise<void> {
    this.#closed = true;
    return this.release();
  }

  async #tryAcquire(): Promise<boolean> {
    if (this.#closed) throw new ConfigError("leaderLock", "is closed; create a new one");
    const current = this.#client;
    if (this.#held && current !== undefined) {
      try {
        await current.query("SELECT 1");
        return true;
      } catch (thrown) {
        this.#drop(current, interpretError(thrown, "leader lock liveness check"));
      }
    }
    try {
      const client = this.#client ?? (await this.#connect());
      const { rows } = await client.query<{ acquired: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS acquired", [this.#key]);
      this.#held = this.#client === client && rows[0]?.acquired === true;
      return this.#held;
    } catch (thrown) {
      const error = interpretError(thrown, "leader lock");
      if (this.#client !== undefined) this.#drop(this.#client, undefined);
      if (errorCodeOf(error) !== ErrorCode.Infrastructure) throw error;
      this.#report(error);
      return false;
    }
  }

  async #release(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    if (client === undefined) {
      this.#held = false;
      return;
    }
    const held = this.#held;
    this.#held = false;
    // Ending the session releases the lock anyway; over a connection the network stopped carrying, neither step
    // would ever be acknowledged, so the socket is dropped after a moment.
    const unlockAndEnd = (async () => {
      if (held) await client.query("SELECT pg_advisory_unlock($1::bigint)", [this.#key]).catch(() => undefined);
      await client.end();
    })();
    await closeWithin(unlockAndEnd, () => dropConnection(client));
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.#connectionString,
      application_name: this.#applicationName,
      keepAlive: true,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: this.#livenessTimeoutMs,
    });
    client.on("error", (error) => this.#drop(client, error));
    client.on("end", () => this.#drop(client, undefined));
    try {
      await client.connect();
    } catch (thrown) {
      await client.end().catch(() => undefined);
      throw thrown;
    }
    this.#client = client;
    return client;
  }

  /** The connection failed or ended: the lock is gone with its session. */
  #drop(client: pg.Client, error: Error | undefined): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#held = false;
    client.end().catch(() => undefined);
    if (error !== undefined && !this.#closed) this.#report(interpretError(error, "leader lock connection"));
  }

  #serially<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work, work);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  #report(error: Error): void {
    try {
      this.#onError(error);
    } catch {
      // A failing error reporter must not break the election.
    }
  }
}
