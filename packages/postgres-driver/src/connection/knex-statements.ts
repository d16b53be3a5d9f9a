import { toQuestionMarks } from "./question-mark-placeholders";
import type { Statement, StatementResult, Statements } from "./statement";

/**
 * What stint uses of a knex transaction (the `trx` that
 * `knex.transaction(async (trx) => …)` hands out, on the `pg` client): a
 * function object, as every knex instance is, marked `isTransaction`.
 * Declared here so that stint needs no knex at run time.
 */
export interface KnexTransactionLike {
  (...args: never[]): unknown;
  /** `true` on a transaction, absent on a knex instance. */
  readonly isTransaction?: boolean;
  raw(sql: string, bindings: readonly unknown[]): PromiseLike<unknown>;
  readonly client?: { readonly dialect?: unknown };
}

/**
 * True for a knex transaction (recognised by its shape, so any copy of
 * knex passes): what {@link isKnexLike} recognises, marked
 * `isTransaction`.
 *
 * @example
 * ```ts
 * await knex.transaction(async (trx) => isKnexTransaction(trx)); // true
 * isKnexTransaction(knex); // false: the instance, not a transaction
 * ```
 */
export function isKnexTransaction(value: unknown): value is KnexTransactionLike {
  return isKnexLike(value) && (value as { isTransaction?: unknown }).isTransaction === true;
}

/**
 * True for a knex instance or transaction: a function with `raw`,
 * `transaction` and a `client`. Lets a knex instance passed where its
 * transaction belongs be refused with a message that says so.
 */
export function isKnexLike(value: unknown): boolean {
  if (typeof value !== "function") return false;
  const knex = value as unknown as Record<string, unknown>;
  return typeof knex["raw"] === "function" && typeof knex["transaction"] === "function" && typeof knex["client"] === "object" && knex["client"] !== null;
}

/** The SQL dialect of a knex instance or transaction (`"postgresql"` for the `pg` client), when it says. */
export function knexDialectOf(knex: KnexTransactionLike): string | undefined {
  const dialect = knex.client?.dialect;
  return typeof dialect === "string" ? dialect : undefined;
}

/**
 * Runs statements in a knex transaction through `trx.raw(sql, bindings)`,
 * knex's public call for a statement of one's own: it runs on the
 * transaction's connection, goes through knex's query events and logging,
 * and answers with pg's result (`rows`) on the `pg` client. The other way
 * in, the connection the transaction holds, is reachable only through
 * knex's internals (`trx.client.acquireConnection()`), which change
 * between versions. `raw` binds its values to `?` marks, so the
 * statement's `$n` parameters are rewritten first (see
 * {@link toQuestionMarks}); knex passes the values to pg as they are (an
 * array stays an array). A statement is never named, so a transaction
 * pooler (PgBouncer in transaction mode) does not matter.
 *
 * knex hands results to the application's `postProcessResponse` hook, if
 * it has one: a result whose rows lost a column the server sent (a hook
 * that renames keys) is refused rather than misread.
 *
 * @example
 * ```ts
 * await knex.transaction(async (trx) => {
 *   await trx("orders").insert(order);
 *   await client.enqueue(SendReceipt, { orderId: order.id }, { transaction: trx });
 * });
 * ```
 */
export class KnexStatements implements Statements {
  readonly #transaction: KnexTransactionLike;

  constructor(transaction: KnexTransactionLike) {
    this.#transaction = transaction;
  }

  async run<R extends object>(statement: Statement): Promise<StatementResult<R>> {
    const { sql, bindings } = toQuestionMarks(statement);
    let result: unknown;
    try {
      // knex refuses an undefined binding (pg sends it as NULL), also inside an array.
      result = await this.#transaction.raw(sql, bindings.map(undefinedToNull));
    } catch (thrown) {
      throw withoutStatementText(thrown, statement.text);
    }
    return { rows: rowsOf<R>(result) };
  }
}

/**
 * knex writes the statement it sent (with `$n` parameters, as
 * `statement.text` has them) and " - " in front of the message of the
 * error it passes on, which is PostgreSQL's own error; that text is taken
 * off again, so the message reads as on the other paths.
 */
function withoutStatementText(thrown: unknown, text: string): unknown {
  const prefix = `${text} - `;
  if (thrown instanceof Error && thrown.message.startsWith(prefix)) thrown.message = thrown.message.slice(prefix.length);
  return thrown;
}

function undefinedToNull(value: unknown): unknown {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.map(undefinedToNull) : value;
}

function rowsOf<R>(result: unknown): R[] {
  const { rows, fields } = (result ?? {}) as { rows?: unknown; fields?: unknown };
  if (!Array.isArray(rows)) {
    throw new TypeError(
      "knex answered a raw statement without pg's rows: the transaction is not on knex's pg client, or a postProcessResponse hook changed the result",
    );
  }
  if (Array.isArray(fields)) {
    const columns = (fields as { name?: unknown }[]).map((field) => field.name).filter((name): name is string => typeof name === "string");
    const row = rows[0] as Record<string, unknown> | undefined;
    const missing = row === undefined ? undefined : columns.find((column) => !Object.hasOwn(row, column));
    if (missing !== undefined) {
      throw new TypeError(`knex answered a raw statement whose rows lack the column "${missing}": a postProcessResponse hook renamed the result's keys`);
    }
  }
  return rows as R[];
}
