import type { Statement, StatementResult, Statements } from "./statement";

/**
 * Where Drizzle marks the kind of each of its classes: a registered symbol,
 * the same in every copy of drizzle-orm (Drizzle's own `is()` reads it).
 */
const ENTITY_KIND = Symbol.for("drizzle:entityKind");

/** The node-postgres driver's transaction class, as Drizzle names it. */
const NODE_PG_TRANSACTION = "NodePgTransaction";

/**
 * What stint uses of a Drizzle transaction: `execute`, which takes
 * anything with `getSQL()` (Drizzle's `SQLWrapper`). Declared here so
 * that stint needs no drizzle-orm at run time; its parameter is `never`
 * so that Drizzle's own `execute(query: SQLWrapper | string)` fits.
 */
export interface DrizzleTransactionLike {
  execute(query: never): PromiseLike<unknown>;
}

/**
 * The Drizzle kinds of `value`'s class and its parents (`["NodePgTransaction",
 * "PgTransaction", "PgDatabase"]` for a node-postgres transaction), or an
 * empty list for anything that is not Drizzle's.
 *
 * @example
 * ```ts
 * await db.transaction(async (tx) => drizzleKindsOf(tx)); // ["NodePgTransaction", "PgTransaction", "PgDatabase"]
 * ```
 */
export function drizzleKindsOf(value: unknown): readonly string[] {
  if (typeof value !== "object" || value === null) return [];
  const kinds: string[] = [];
  const prototype = Object.getPrototypeOf(value) as { constructor?: unknown } | null;
  for (let type: unknown = prototype?.constructor; typeof type === "function"; type = Object.getPrototypeOf(type)) {
    const kind = (type as unknown as Record<symbol, unknown>)[ENTITY_KIND];
    if (typeof kind === "string" && kinds.at(-1) !== kind) kinds.push(kind);
  }
  return kinds;
}

/**
 * True for the transaction of Drizzle's node-postgres driver (the `tx` of
 * `db.transaction(async (tx) => …)` on `drizzle-orm/node-postgres`),
 * recognised by the kind Drizzle marks its classes with rather than by
 * `instanceof`, so any copy of drizzle-orm passes.
 *
 * @example
 * ```ts
 * await db.transaction(async (tx) => isDrizzleTransaction(tx)); // true
 * isDrizzleTransaction(db); // false: the database, not a transaction
 * ```
 */
export function isDrizzleTransaction(value: unknown): value is DrizzleTransactionLike {
  return drizzleKindsOf(value)[0] === NODE_PG_TRANSACTION && typeof (value as { execute?: unknown }).execute === "function";
}

/**
 * Runs statements in a Drizzle transaction through `tx.execute(query)`,
 * Drizzle's public call for SQL of one's own. `execute` takes any
 * `SQLWrapper`, and what the statement's `getSQL()` returns is asked for
 * one thing, its query: `toQuery()` answers the statement's text and
 * values as they are (the text already has PostgreSQL's `$n`
 * parameters). Building the query with Drizzle's `sql` tag instead would
 * need drizzle-orm at run time, and the same copy of it as the
 * application's; the other way in, the connection inside the transaction
 * (`tx.session.client`), is Drizzle's internal state. Through `execute`
 * the statement runs on the transaction's connection, unnamed (no
 * prepared statement on it, so a transaction pooler is no concern), and
 * shows in Drizzle's query logger.
 *
 * The node-postgres driver answers with pg's result; its `rows` keep pg's
 * parsing of `bigint` and `boolean` (Drizzle changes only date and
 * interval types), as the Kysely path does. Drizzle wraps a failed
 * statement's error in its own, whose message carries the statement and
 * its values: the error PostgreSQL sent (its `cause`) is thrown instead,
 * as the other paths throw it.
 *
 * @example
 * ```ts
 * await db.transaction(async (tx) => {
 *   await tx.insert(orders).values(order);
 *   await client.enqueue(SendReceipt, { orderId: order.id }, { transaction: tx });
 * });
 * ```
 */
export class DrizzleStatements implements Statements {
  readonly #transaction: DrizzleTransactionLike;

  constructor(transaction: DrizzleTransactionLike) {
    this.#transaction = transaction;
  }

  async run<R extends object>(statement: Statement): Promise<StatementResult<R>> {
    const query = Object.freeze({ sql: statement.text, params: [...statement.values] });
    let result: unknown;
    try {
      const wrapper = { getSQL: () => ({ toQuery: () => query }) };
      result = await this.#transaction.execute(wrapper as never);
    } catch (thrown) {
      throw driverErrorOf(thrown);
    }
    const rows = (result as { rows?: unknown } | null)?.rows;
    if (!Array.isArray(rows)) throw new TypeError("the Drizzle transaction answered a statement without pg's rows: it is not on drizzle-orm/node-postgres");
    return { rows: rows as R[] };
  }
}

/** The error the driver threw, out of the `DrizzleQueryError` (it has the failed `query` and `params`) that wraps it. */
function driverErrorOf(thrown: unknown): unknown {
  if (!(thrown instanceof Error)) return thrown;
  const wrapper = thrown as Error & { readonly query?: unknown; readonly params?: unknown };
  const wrapped = typeof wrapper.query === "string" && Array.isArray(wrapper.params) && typeof wrapper.cause === "object" && wrapper.cause !== null;
  return wrapped ? wrapper.cause : thrown;
}
