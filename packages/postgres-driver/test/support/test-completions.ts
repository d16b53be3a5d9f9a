import { sql } from "kysely";
import { PostgresCompletionSource } from "../../src";
import type { TestSchema } from "../../src/testing";

/** A completion source on a test schema, and what a test asks of it in the database. */
export interface TestCompletions {
  readonly source: PostgresCompletionSource;
  /** Its connection's `application_name`: `<schema>:await`. */
  readonly applicationName: string;
  /** How many connections carry that name now. */
  connections(): Promise<number>;
  /** How many rows `job_waiters` holds now (registered waits). */
  registeredWaits(): Promise<number>;
}

/**
 * A `PostgresCompletionSource` for `test`'s schema that reconnects after
 * 20 ms and keeps its connection errors to itself (tests terminate it).
 *
 * @example
 * ```ts
 * const completions = testCompletions(test);
 * expect(await completions.connections()).to.equal(0);
 * ```
 */
export function testCompletions(test: TestSchema): TestCompletions {
  const applicationName = `${test.schema}:await`;
  const source = new PostgresCompletionSource({
    connectionString: test.connectionString,
    schema: test.schema,
    applicationName,
    reconnectMinDelayMs: 20,
    onError: () => undefined,
  });
  const count = async (query: ReturnType<typeof sql<{ n: number }>>): Promise<number> => (await query.execute(test.db)).rows[0]?.n ?? 0;
  return {
    source,
    applicationName,
    connections: () => count(sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${applicationName}`),
    registeredWaits: () => count(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.id(test.schema, "job_waiters")}`),
  };
}
