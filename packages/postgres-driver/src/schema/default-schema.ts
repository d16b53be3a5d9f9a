/**
 * The schema stint's tables live in unless told otherwise.
 *
 * @example
 * ```ts
 * await migrate(db, { schema: DEFAULT_SCHEMA }); // same as migrate(db)
 * ```
 */
export const DEFAULT_SCHEMA = "stint";
