import { CompiledQuery, Kysely, PostgresDialect, type LogEvent } from "kysely";
import pg from "pg";
import { PostgresJobStore } from "../../src";
import { createTestSchema, type TestSchema } from "../../src/testing";

/** A store over a test schema that keeps every statement it sends, for tests that count statements or read their plans. */
export interface LoggedStore {
  readonly store: PostgresJobStore;
  /** Every statement sent so far, with its parameters. */
  readonly statements: CompiledQuery[];
  /** The plan PostgreSQL makes for `statement`, with its parameters, as text. */
  explain(statement: CompiledQuery): Promise<string>;
  /** Ends its pool. */
  close(): Promise<void>;
}

/**
 * A `PostgresJobStore` on a pool of its own over `test`'s schema, whose
 * statements are logged (by Kysely's `log`, as they are sent).
 *
 * @example
 * ```ts
 * const logged = loggedStore(test);
 * await logged.store.cancelJobs({ queue: "mail", states: ["queued"], limit: 1_000 });
 * expect(logged.statements).to.have.length(1);
 * ```
 */
export function loggedStore(test: TestSchema): LoggedStore {
  const pool = new pg.Pool({ connectionString: test.connectionString, max: 2 });
  const statements: CompiledQuery[] = [];
  const log = (event: LogEvent): void => void statements.push(event.query);
  const store = new PostgresJobStore({ db: new Kysely<any>({ dialect: new PostgresDialect({ pool }), log }), schema: test.schema });
  return {
    store,
    statements,
    explain: async (statement) => {
      const { rows } = await test.db.executeQuery<{ "QUERY PLAN": string }>(CompiledQuery.raw(`EXPLAIN ${statement.sql}`, [...statement.parameters]));
      return rows.map((row) => row["QUERY PLAN"]).join("\n");
    },
    close: () => pool.end(),
  };
}

/**
 * Registers mocha hooks that give each test a freshly migrated schema and a
 * {@link loggedStore} over it: `schema()` and `logged()` are the current test's.
 */
export function loggedStorePerTest(): { readonly schema: () => TestSchema; readonly logged: () => LoggedStore } {
  let current: { readonly schema: TestSchema; readonly logged: LoggedStore } | undefined;
  beforeEach(async () => {
    const schema = await createTestSchema();
    current = { schema, logged: loggedStore(schema) };
  });
  afterEach(async () => {
    await current?.logged.close();
    await current?.schema.drop();
    current = undefined;
  });
  const now = (): { readonly schema: TestSchema; readonly logged: LoggedStore } => {
    if (current === undefined) throw new Error("no test schema: call loggedStorePerTest() inside describe");
    return current;
  };
  return { schema: () => now().schema, logged: () => now().logged };
}
