import { CompiledQuery, type Kysely } from "kysely";
import type { Statement, StatementResult, Statements } from "./statement";

/**
 * Runs statements through a Kysely executor: the caller's transaction (an
 * enqueue that must commit with the caller's writes), or a Kysely instance
 * the store was given without a {@link StatementRunner}. Statement names
 * are not used: inside a transaction the connection is the caller's, and
 * the statement is sent as Kysely sends any other.
 *
 * @example
 * ```ts
 * await db.transaction().execute((trx) => enqueue(new KyselyStatements(trx), "stint", job));
 * ```
 */
export class KyselyStatements implements Statements {
  readonly #executor: Kysely<any>;

  constructor(executor: Kysely<any>) {
    this.#executor = executor;
  }

  run<R extends object>(statement: Statement): Promise<StatementResult<R>> {
    return this.#executor.executeQuery<R>(CompiledQuery.raw(statement.text, [...statement.values]));
  }
}
