import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from "kysely";

/**
 * A Kysely with PostgreSQL's syntax and no connection: it only turns
 * statements into text and parameters (hot statements compiled once,
 * migrations printed as a script).
 *
 * @example
 * ```ts
 * const { sql: text, parameters } = sql`SELECT ${7}::integer AS n`.compile(COMPILE_ONLY);
 * ```
 */
export const COMPILE_ONLY = new Kysely<any>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});
