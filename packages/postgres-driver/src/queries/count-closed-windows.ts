import { sql, type Kysely } from "kysely";

/**
 * How many unique windows have closed (their `until` has passed), of
 * `queues` when given: what `deleteClosedWindows` would delete, batch by
 * batch, and what `stint prune --dry-run` reports. Reads
 * `unique_windows_until_idx`; takes no lock.
 *
 * ### SQL
 * ```sql
 * SELECT count(*) AS n FROM "stint"."unique_windows" WHERE until <= now() [AND queue = ANY($1)]
 * ```
 *
 * @example
 * ```ts
 * const closed = await countClosedWindows(db, "stint", { queues: ["digest"] });
 * ```
 */
export async function countClosedWindows(executor: Kysely<any>, schema: string, params: { readonly queues?: readonly string[] } = {}): Promise<number> {
  const inQueues = params.queues === undefined ? sql`` : sql`AND queue = ANY(${[...params.queues]}::text[])`;
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.id(schema, "unique_windows")}
 WHERE until <= now() ${inQueues}`.execute(executor);
  return Number(rows[0]?.n ?? 0);
}
