import { randomUUID } from "node:crypto";
import pg from "pg";
import { closeWithin, dropConnection } from "./close-within";
import { interpretError } from "./interpret-error";
import { openSessionClient } from "./open-session-client";

/** How a {@link LeaderLease} connects and what it holds. */
export interface LeaderLeaseParts {
  readonly connectionString: string;
  readonly applicationName: string;
  readonly schema: string;
  /** The lock's name in `leader_leases`. */
  readonly name: string;
  /** How long a lease lasts without renewal, in ms; it is renewed every third of that. */
  readonly leaseMs: number;
  /** How long each statement may take, in ms. */
  readonly statementTimeoutMs: number;
  /** Failures of a renewal, which it handles by giving the lease up or trying again. */
  readonly onError: (error: Error) => void;
}

/**
 * Leadership as a row of `leader_leases` instead of a session lock, for a
 * connection that cannot hold a session (a transaction pooler): each
 * statement stands alone, so any server connection may run it. The holder
 * is this process incarnation (a random token), the expiry is on the
 * database clock, and the holder renews it every third of the lease while
 * it leads. It counts itself the leader only until its own deadline (the
 * send time of the last successful take or renewal, plus the lease, less
 * a margin), so a renewal that does not come back in time ends its
 * leadership before another process can take the row.
 *
 * ### SQL
 * ```sql
 * INSERT INTO "stint"."leader_leases" AS l (name, holder, expires_at)   -- take, or renew
 * VALUES ($1, $2, now() + $3 * interval '1 millisecond')
 * ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
 *  WHERE l.holder = excluded.holder OR l.expires_at < now()
 * RETURNING holder
 * DELETE FROM "stint"."leader_leases" WHERE name = $1 AND holder = $2     -- release
 * ```
 *
 * @example
 * ```ts
 * const lease = new LeaderLease({ connectionString, applicationName, schema: "stint", name: "maintenance", leaseMs: 15_000,
 *   statementTimeoutMs: 2_000, onError: console.warn });
 * if (await lease.tryAcquire()) await rescue.runOnce();
 * await lease.release();
 * ```
 */
export class LeaderLease {
  readonly #parts: LeaderLeaseParts;
  readonly #holder = randomUUID();
  readonly #table: string;
  #client: pg.Client | undefined;
  /** Until when (performance.now()) this process may count itself the holder. */
  #heldUntil = 0;
  #renewTimer: NodeJS.Timeout | undefined;

  constructor(parts: LeaderLeaseParts) {
    this.#parts = parts;
    this.#table = `${escapeIdentifier(parts.schema)}.leader_leases`;
  }

  get held(): boolean {
    return performance.now() < this.#heldUntil;
  }

  /** Takes the lease if it is free or expired (or renews it when held); true when this process holds it. */
  async tryAcquire(): Promise<boolean> {
    const sentAt = performance.now();
    const client = await this.#connected();
    const { rows } = await client.query(
      `INSERT INTO ${this.#table} AS l (name, holder, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
 WHERE l.holder = excluded.holder OR l.expires_at < now()
RETURNING holder`,
      [this.#parts.name, this.#holder, this.#parts.leaseMs],
    );
    if (rows.length === 0) {
      this.#heldUntil = 0;
      this.#stopRenewing();
      return false;
    }
    this.#heldUntil = sentAt + this.#parts.leaseMs - this.#margin();
    this.#renewLater();
    return true;
  }

  /** Gives the lease up (deletes the row if it is still this process's) and closes the connection. Idempotent. */
  async release(): Promise<void> {
    const wasHeld = this.#heldUntil > 0;
    this.#heldUntil = 0;
    this.#stopRenewing();
    const client = this.#client;
    this.#client = undefined;
    if (client === undefined) return;
    const deleteAndEnd = (async () => {
      if (wasHeld) await client.query(`DELETE FROM ${this.#table} WHERE name = $1 AND holder = $2`, [this.#parts.name, this.#holder]).catch(() => undefined);
      await client.end();
    })();
    await closeWithin(deleteAndEnd, () => dropConnection(client));
  }

  /** Leaves room for the renewal's own round trip and a slower clock: a tenth of the lease, at least 100 ms. */
  #margin(): number {
    return Math.max(100, Math.floor(this.#parts.leaseMs / 10));
  }

  #renewLater(): void {
    this.#stopRenewing();
    this.#renewTimer = setTimeout(() => void this.#renew(), Math.max(1, Math.floor(this.#parts.leaseMs / 3)));
    this.#renewTimer.unref();
  }

  async #renew(): Promise<void> {
    this.#renewTimer = undefined;
    if (!this.held) return;
    try {
      await this.tryAcquire();
    } catch (thrown) {
      this.#drop();
      this.#parts.onError(interpretError(thrown, "leader lease renewal"));
      // Still the holder until the deadline passes: try again while it has not.
      if (this.held) this.#renewLater();
    }
  }

  #stopRenewing(): void {
    clearTimeout(this.#renewTimer);
    this.#renewTimer = undefined;
  }

  async #connected(): Promise<pg.Client> {
    if (this.#client !== undefined) return this.#client;
    const client = await openSessionClient({
      connectionString: this.#parts.connectionString,
      applicationName: this.#parts.applicationName,
      connectTimeoutMs: this.#parts.statementTimeoutMs,
      queryTimeoutMs: this.#parts.statementTimeoutMs,
      onLost: (lost) => {
        if (this.#client === lost) this.#client = undefined;
      },
    });
    this.#client = client;
    return client;
  }

  /** Forgets a connection that failed: the next statement opens another. */
  #drop(): void {
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined)
      void closeWithin(
        client.end().catch(() => undefined),
        () => dropConnection(client),
      );
  }
}

function escapeIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
