import type pg from "pg";

/** After a failed check-out, how long before the next statement tries again (the pool serves meanwhile). */
const RETRY_AFTER_MS = 1_000;

/**
 * One pooled connection kept checked out for the hot single statements
 * (claims, heartbeats, outcome writes, enqueues; see `CompiledStatements`),
 * which are sent to it directly while it is free. A statement through the
 * pool pays for its check-out every time — a turn of the next-tick queue, a
 * connection-timeout timer armed and cleared, the waiting-queue bookkeeping
 * — about 80 µs of its round trip on a process idle between statements
 * (800 interleaved statements 10 ms apart), twice on the path from enqueue
 * to handler start. While the connection runs a statement, or before it is
 * checked out, statements go through the pool as before, so they never
 * queue behind each other here.
 *
 * The connection counts against the pool's size, so `createDatabase` keeps one
 * only for a pool of at least {@link MIN_POOL_SIZE}. It is checked out after
 * the first statement (taking the connection that statement used, so no
 * connection is opened for it), given back to the pool (which discards it)
 * when a statement on it fails or it reports an error, replaced on a later
 * statement, and given back at close.
 *
 * @example
 * ```ts
 * const hot = new HotConnection(pool);
 * const { rows } = await hot.query("SELECT $1::integer AS n", [7]);
 * await hot.close();
 * ```
 */
export class HotConnection {
  readonly #pool: pg.Pool;
  #client: pg.PoolClient | undefined;
  #busy = false;
  /** Settles when the check-out in progress is over (either way). */
  #checkingOut: Promise<void> | undefined;
  #retryAt = 0;
  #closed = false;
  /** Clients given back already: pg-pool throws on a second release. */
  readonly #released = new WeakSet<pg.PoolClient>();

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** Runs one statement on the kept connection when it is free, through the pool otherwise. */
  query<R extends object>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    const client = this.#client;
    // A statement that comes while the connection is being checked out waits for it, rather than take a second one.
    if (client === undefined && this.#checkingOut !== undefined) return this.#checkingOut.then(() => this.query<R>(text, values));
    if (client === undefined || this.#busy) {
      const answer = this.#pool.query<R>(text, values);
      // Checked out once this statement is over, so the connection it used (idle again by then) is the one kept.
      if (client === undefined) answer.then(this.#checkOutLater, this.#checkOutLater);
      return answer;
    }
    this.#busy = true;
    return new Promise((resolve, reject) => {
      client.query<R>(text, values, (error: Error | null, result: pg.QueryResult<R>) => {
        if (this.#client === client) this.#busy = false;
        if (error) {
          // As the pool does after a failed statement: the connection is not used again.
          this.#giveBack(client, error);
          reject(error);
        } else {
          if (this.#closed) this.#giveBack(client);
          resolve(result);
        }
      });
    });
  }

  /** Gives the connection back to the pool (at once, even mid-statement: the pool is closing). Idempotent. */
  close(): void {
    this.#closed = true;
    const client = this.#client;
    if (client !== undefined) this.#giveBack(client, this.#busy ? new Error("the database is closing") : undefined);
  }

  readonly #checkOutLater = (): void => this.#checkOut();

  #checkOut(): void {
    if (this.#closed || this.#client !== undefined || this.#checkingOut !== undefined || Date.now() < this.#retryAt) return;
    this.#checkingOut = this.#pool.connect().then(
      (client) => {
        this.#checkingOut = undefined;
        if (this.#closed || this.#client !== undefined) {
          client.release();
          return;
        }
        const lost = (error?: Error): void => this.#giveBack(client, error ?? new Error("the connection ended"));
        client.once("error", lost);
        client.once("end", lost);
        this.#client = client;
        this.#busy = false;
      },
      () => {
        this.#checkingOut = undefined;
        this.#retryAt = Date.now() + RETRY_AFTER_MS;
      },
    );
  }

  /** Stops using `client` and returns it to the pool; with an error the pool discards it. */
  #giveBack(client: pg.PoolClient, error?: Error): void {
    if (this.#client === client) {
      this.#client = undefined;
      this.#busy = false;
    }
    if (this.#released.has(client)) return;
    this.#released.add(client);
    client.release(error);
  }
}

/** The smallest pool that keeps a {@link HotConnection}: it leaves the others at least two connections. */
export const MIN_POOL_SIZE = 3;
