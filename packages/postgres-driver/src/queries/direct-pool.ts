import type { Kysely } from "kysely";
import type pg from "pg";

/** The pool behind each database that `createDatabase` made. */
const POOLS = new WeakMap<object, pg.Pool>();

/**
 * Remembers that `db` runs its statements on `pool`, so the hot statements
 * (see `CompiledStatements`) can go to the pool directly. Only a database
 * made by `createDatabase` is registered: a transaction, or a Kysely
 * instance of the user's own, is a different object and keeps Kysely's path.
 *
 * @example
 * ```ts
 * registerDirectPool(db, pool);
 * ```
 */
export function registerDirectPool(db: Kysely<any>, pool: pg.Pool): void {
  POOLS.set(db, pool);
}

/**
 * The pool a compiled statement may run on without Kysely, or `undefined`
 * for a transaction or a database made elsewhere.
 *
 * @example
 * ```ts
 * const pool = directPoolOf(executor); // undefined inside a transaction
 * ```
 */
export function directPoolOf(executor: Kysely<any>): pg.Pool | undefined {
  return POOLS.get(executor);
}
