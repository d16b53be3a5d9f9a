import { ConfigError, ErrorCode, errorCodeOf } from "@stint/core";
import { applicationName } from "@stint/core/internal";
import { assertSqlIdentifier, type LeaderLock } from "@stint/core/driver";
import pg from "pg";
import { advisoryLockKey } from "./advisory-lock-key";
import { closeWithin, dropConnection } from "./close-within";
import type { SessionCheck } from "./connection/session-check";
import { interpretError } from "./interpret-error";
import { LeaderLease } from "./leader-lease";
import { openSessionClient } from "./open-session-client";
import { DEFAULT_SCHEMA } from "./schema/default-schema";
import { checkSessionClientOptions, millisecondsOption, warnAbout, type SessionClientOptions } from "./session-client-options";

/** Options of {@link PostgresLeaderLock}. */
export interface PostgresLeaderLockOptions extends SessionClientOptions {
  /** Which lock: processes that name the same schema and lock compete. Default `"maintenance"`. */
  readonly name?: string;
  /** How long the liveness check of a held lock may take before the connection counts as dead. Default 2 000. */
  readonly livenessTimeoutMs?: number;
  /**
   * Behind a transaction pooler, how long the lease row lasts without
   * renewal (renewed every third of it): a crashed leader is replaced
   * after at most this long. Default 15 000.
   */
  readonly leaseMs?: number;
}

const OPTION_KEYS = ["name", "livenessTimeoutMs", "leaseMs"];
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
 * Behind a transaction pooler a session lock cannot be held (the pooler
 * may hand the server connection that holds it to another client), so the
 * first `tryAcquire` checks the connection (see `SessionCheck`, shared
 * with the wake-ups when `registerPostgresDriver` builds both) and, where
 * sessions do not hold, elects with a lease row instead (see
 * `LeaderLease`: the `leader_leases` table of migration 14, renewed while
 * held, taken over once expired).
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
  readonly #sessionCheck: SessionCheck;
  /** The lease used instead of the advisory lock, once the check found a transaction pooler. */
  #lease: LeaderLease | undefined;
  readonly #leaseParts: ConstructorParameters<typeof LeaderLease>[0];
  #client: pg.Client | undefined;
  #held = false;
  /** Whether the first `tryAcquire` found out how to elect (see {@link mechanism}). */
  #checked = false;
  #closed = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: PostgresLeaderLockOptions) {
    const checked = checkSessionClientOptions("leaderLock", options, applicationName("leader"), OPTION_KEYS);
    this.#applicationName = checked.applicationName;
    this.#sessionCheck = checked.sessionCheck;
    this.#connectionString = options.connectionString;
    const schema = assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema");
    const name = options.name ?? "maintenance";
    if (typeof name !== "string" || name === "" || name.length > 200) {
      throw new ConfigError("name", "must be a string of 1 to 200 characters");
    }
    this.#key = advisoryLockKey(`stint:leader:${schema}:${name}`);
    this.#livenessTimeoutMs = millisecondsOption("livenessTimeoutMs", options.livenessTimeoutMs, 2_000, 1);
    this.#onError = options.onError ?? warnAbout("STINT_LEADER_LOCK_ERROR", "The leader lock's connection failed");
    this.#leaseParts = {
      connectionString: options.connectionString,
      applicationName: this.#applicationName,
      schema,
      name,
      leaseMs: millisecondsOption("leaseMs", options.leaseMs, 15_000, 300),
      statementTimeoutMs: this.#livenessTimeoutMs,
      onError: (error) => this.#report(error),
    };
  }

  /** The advisory lock key (a signed 64-bit integer in decimal), as found in `pg_locks`. */
  get key(): string {
    return this.#key;
  }

  get held(): boolean {
    return this.#lease?.held ?? this.#held;
  }

  /** How this process elects: `"advisory-lock"` on a session, `"lease"` behind a transaction pooler, `undefined` before the first `tryAcquire`. */
  get mechanism(): "advisory-lock" | "lease" | undefined {
    return this.#lease !== undefined ? "lease" : this.#checked ? "advisory-lock" : undefined;
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
    if (!this.#checked) {
      try {
        if ((await this.#sessionCheck.kind()) === "transaction-pooler") this.#lease = new LeaderLease(this.#leaseParts);
        this.#checked = true;
      } catch (thrown) {
        return this.#failed(thrown);
      }
    }
    if (this.#lease !== undefined) {
      try {
        return await this.#lease.tryAcquire();
      } catch (thrown) {
        return this.#failed(thrown);
      }
    }
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
      if (this.#client !== undefined) this.#drop(this.#client, undefined);
      return this.#failed(thrown);
    }
  }

  /** A failure retrying may fix resolves false (and goes to `onError`); any other rejects. */
  #failed(thrown: unknown): false {
    const error = interpretError(thrown, "leader lock");
    if (errorCodeOf(error) !== ErrorCode.Infrastructure) throw error;
    this.#report(error);
    return false;
  }

  async #release(): Promise<void> {
    await this.#lease?.release();
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
    const client = await openSessionClient({
      connectionString: this.#connectionString,
      applicationName: this.#applicationName,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      queryTimeoutMs: this.#livenessTimeoutMs,
      onLost: (lost, error) => this.#drop(lost, error),
    });
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
