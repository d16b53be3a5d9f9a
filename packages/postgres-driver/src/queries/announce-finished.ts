import { sql, type RawBuilder } from "kysely";
import { completionChannel } from "../completion-channel";

/**
 * `"<schema>".notify_awaited(<channel>, <ids>)` (migration 8): the part of
 * every statement that finishes jobs which tells waiters. `ids` is a
 * `bigint[]` of the jobs the statement finished (an `array_agg` over its
 * updated rows, evaluated after the update); only those somebody waits
 * for are announced, on {@link completionChannel}. Returns how many were
 * named (`NULL` for no ids). The channel is written as a literal (its
 * name is made of a checked identifier), not as a value: a statement that
 * announces can then be compiled once, with value slots for the rest.
 *
 * @example
 * ```ts
 * sql`SELECT coalesce(array_agg(id), '{}')::text[] AS ids, ${announceFinished(schema, sql`array_agg(id)`)} AS announced FROM done`;
 * ```
 */
export function announceFinished(schema: string, ids: RawBuilder<unknown>): RawBuilder<number | null> {
  return sql<number | null>`${sql.id(schema, "notify_awaited")}(${sql.lit(completionChannel(schema))}::text, ${ids})`;
}

/**
 * `SELECT <source>.id FROM <source>`, announcing the finished jobs among
 * its rows first: the last line of a statement that returns the ids it
 * finished.
 *
 * @example
 * ```ts
 * sql`WITH cancelled AS (UPDATE … RETURNING id) ${selectAnnouncing(schema, "cancelled")}`;
 * ```
 */
export function selectAnnouncing(schema: string, source: string): RawBuilder<{ id: string }> {
  const from = sql.id(source);
  return sql<{ id: string }>`SELECT ${from}.id FROM ${from}
 CROSS JOIN (SELECT ${announceFinished(schema, sql`array_agg(id)`)} FROM ${from}) AS announced`;
}
