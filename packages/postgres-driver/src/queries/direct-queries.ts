import type { Kysely } from "kysely";
import type pg from "pg";

/** Where a statement outside a transaction can be sent without Kysely: a `pg.Pool`, or a `HotConnection` in front of one. */
export interface DirectQueries {
  query<R extends object>(text: string, values: unknown[]): Promise<pg.QueryResult<R>>;
}

/** Where each database that `createDatabase` made sends its hot statements. */
const DIRECT = new WeakMap<object, DirectQueries>();

/**
 * Remembers that `db` may run its hot statements on `direct` (see
 * `CompiledStatements`). Only a database made by `createDatabase` is
 * registered: a transaction, or a Kysely instance of the user's own, is a
 * different object and keeps Kysely's path.
 *
 * @example
 * ```ts
 * registerDirectQueries(db, new HotConnection(pool));
 * ```
 */
export function registerDirectQueries(db: Kysely<any>, direct: DirectQueries): void {
  DIRECT.set(db, direct);
}

/**
 * Where a compiled statement may run without Kysely, or `undefined` for a
 * transaction or a database made elsewhere.
 *
 * @example
 * ```ts
 * const direct = directQueriesOf(executor); // undefined inside a transaction
 * ```
 */
export function directQueriesOf(executor: Kysely<any>): DirectQueries | undefined {
  return DIRECT.get(executor);
}
