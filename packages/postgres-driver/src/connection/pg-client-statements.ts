import type { Statement, StatementResult, Statements } from "./statement";

/**
 * What stint uses of a node-postgres connection: `query(config)` with a
 * `{ text, values }` config, answering pg's result. A `pg.Client` and a
 * `pg.PoolClient` both have it; declared here so that any copy of pg (or a
 * client with pg's interface) fits.
 */
export interface PgClientLike {
  query(config: { readonly text: string; readonly values: unknown[] }): Promise<{ readonly rows: unknown[] }>;
  connect(...args: never[]): unknown;
  on(...args: never[]): unknown;
}

/**
 * True for a node-postgres connection — a `Client`, or the `PoolClient`
 * that `pool.connect()` checks out — recognised by its shape (`query`,
 * `connect`, and `on` as an event emitter has), so duplicated copies of
 * pg pass. A `pg.Pool` has the same shape; tell it apart first with
 * {@link isPgPool}.
 *
 * @example
 * ```ts
 * isPgClient(await pool.connect()); // true
 * isPgClient({ query: () => undefined }); // false
 * ```
 */
export function isPgClient(value: unknown): value is PgClientLike {
  if (typeof value !== "object" || value === null) return false;
  const client = value as Record<string, unknown>;
  return typeof client["query"] === "function" && typeof client["connect"] === "function" && typeof client["on"] === "function";
}

/**
 * True for a `pg.Pool` (or pg-pool's `Pool`): a client-like object that
 * also counts its connections.
 *
 * @example
 * ```ts
 * isPgPool(new pg.Pool()); // true
 * isPgPool(await pool.connect()); // false
 * ```
 */
export function isPgPool(value: unknown): boolean {
  if (!isPgClient(value)) return false;
  const pool = value as unknown as Record<string, unknown>;
  return typeof pool["totalCount"] === "number" && typeof pool["idleCount"] === "number" && typeof pool["waitingCount"] === "number";
}

/**
 * Whether a pg connection is inside a transaction, by what its last
 * ReadyForQuery said: `false` when it said idle (`"I"`), `undefined` when
 * the client cannot tell (an older pg, a client with pg's interface
 * only, or one that has not answered yet).
 */
export function pgClientInTransaction(client: PgClientLike): boolean | undefined {
  const withStatus = client as PgClientLike & { getTransactionStatus?: () => unknown };
  const status = typeof withStatus.getTransactionStatus === "function" ? withStatus.getTransactionStatus() : undefined;
  if (status === "I") return false;
  if (status === "T" || status === "E") return true;
  return undefined;
}

/**
 * Runs statements on a node-postgres connection the caller holds inside
 * `BEGIN` (a `Client`, or a `PoolClient` from `pool.connect()`), as plain
 * parameterised queries: `{ text, values }`, never named, so nothing is
 * prepared on the caller's connection and a transaction pooler (PgBouncer
 * in transaction mode) is no concern. Rows come back as the connection's
 * type parsers make them (ids of `bigint` columns as strings, unless the
 * application changed pg's parsers; stint's queries turn ids into strings
 * either way).
 *
 * @example
 * ```ts
 * const connection = await pool.connect();
 * await connection.query("BEGIN");
 * await client.enqueue(SendReceipt, { orderId: 42 }, { transaction: connection });
 * await connection.query("COMMIT");
 * connection.release();
 * ```
 */
export class PgClientStatements implements Statements {
  readonly #client: PgClientLike;

  constructor(client: PgClientLike) {
    this.#client = client;
  }

  async run<R extends object>(statement: Statement): Promise<StatementResult<R>> {
    const result = await this.#client.query({ text: statement.text, values: [...statement.values] });
    if (!Array.isArray(result?.rows))
      throw new TypeError("the pg client answered a statement without rows: it does not behave as node-postgres's query(config)");
    return { rows: result.rows as R[] };
  }
}
