import { sql, type RawBuilder } from "kysely";

/**
 * The comment that opens a hot-path statement whose text is the same on
 * every call (only its parameters change). The pools `createDatabase`
 * builds send such a statement as a named prepared statement, so
 * PostgreSQL parses and plans it once per connection instead of on every
 * call; `prepared-statement-name.ts` names it.
 */
export const PREPARED_MARK = "/* stint:prepared */ ";

/**
 * Marks `statement` as one to prepare (see {@link PREPARED_MARK}).
 *
 * @example
 * ```ts
 * const { rows } = await prepared(sql`SELECT … WHERE id = ${id}`).execute(db);
 * ```
 */
export function prepared<R>(statement: RawBuilder<R>): RawBuilder<R> {
  return sql<R>`${sql.raw(PREPARED_MARK)}${statement}`;
}
