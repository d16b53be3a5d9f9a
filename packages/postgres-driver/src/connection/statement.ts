/**
 * One statement as the driver sends it: the text, its values in `$1…$n`
 * order, and for a hot statement the name to prepare it under. Nothing
 * reads a statement's meaning from its text: whether it is prepared is
 * said here, by `name`.
 *
 * @example
 * ```ts
 * const statement: Statement = { name: "stint_3f9a0c1d", text: "SELECT $1::integer AS n", values: [7] };
 * ```
 */
export interface Statement {
  /**
   * The name to prepare the statement under, once per connection, when the
   * runner's prepared-statement mode allows; a statement without one is
   * always sent unnamed (parsed and planned on every call).
   */
  readonly name?: string;
  readonly text: string;
  readonly values: readonly unknown[];
}

/** The rows a statement answered. */
export interface StatementResult<R> {
  readonly rows: R[];
}

/**
 * Somewhere statements run: the pools' {@link StatementRunner}, or a caller's
 * transaction ({@link KyselyStatements}). The query functions in
 * `queries/` send their hot statements here.
 *
 * @example
 * ```ts
 * const { rows } = await statements.run<{ n: number }>({ text: "SELECT $1::integer AS n", values: [7] });
 * ```
 */
export interface Statements {
  run<R extends object>(statement: Statement): Promise<StatementResult<R>>;
}
