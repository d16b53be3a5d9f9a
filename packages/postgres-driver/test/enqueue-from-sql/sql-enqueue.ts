import type pg from "pg";

/** The named options of the SQL function `<schema>.enqueue`, as a test passes them (intervals as text). */
export interface SqlEnqueueOptions {
  readonly run_at?: Date | string | null;
  readonly delay?: string | null;
  readonly priority?: number | null;
  readonly max_attempts?: number | null;
  readonly timeout?: string | null;
  readonly dedupe_key?: string | null;
  readonly dedupe?: string | null;
  readonly meta?: unknown;
  readonly max_payload_bytes?: number | null;
  readonly unique_key?: string | null;
  readonly unique_for?: string | null;
  readonly start_by?: Date | string | null;
  readonly expire_in?: string | null;
  readonly group_key?: string | null;
  readonly serial_key?: string | null;
  readonly serial_on_dead?: string | null;
}

/** The SQL type each option's parameter is cast to. */
const OPTION_TYPES: Readonly<Record<keyof SqlEnqueueOptions, string>> = {
  run_at: "timestamptz",
  delay: "interval",
  priority: "integer",
  max_attempts: "integer",
  timeout: "interval",
  dedupe_key: "text",
  dedupe: "text",
  meta: "jsonb",
  max_payload_bytes: "integer",
  unique_key: "text",
  unique_for: "interval",
  start_by: "timestamptz",
  expire_in: "interval",
  group_key: "text",
  serial_key: "text",
  serial_on_dead: "text",
};

/** How a call of the function ended: the job's id, or the error PostgreSQL raised. */
export type SqlEnqueueOutcome =
  | { readonly id: string; readonly refused?: undefined }
  | { readonly id?: undefined; readonly refused: { readonly code: string | undefined; readonly column: string | undefined; readonly message: string } };

/**
 * Calls `<schema>.enqueue(queue, payload, name => value, …)` on `client` in
 * named notation, as a producer in another language would, with `payload`
 * and `meta` sent as JSON text (`undefined` leaves an option out, `null`
 * passes SQL NULL; a `payload` of `null` is SQL NULL too — pass
 * `new JsonText("null")` as the payload or meta for a JSON null, or any
 * text to send as it is).
 *
 * @example
 * ```ts
 * const { id } = await sqlEnqueue(client, schema, "mail", { to: "a@example.com" }, { priority: 5 });
 * ```
 */
export async function sqlEnqueue(
  client: pg.ClientBase,
  schema: string,
  queue: string | null,
  payload: unknown,
  options: SqlEnqueueOptions = {},
): Promise<SqlEnqueueOutcome> {
  const values: unknown[] = [queue, payloadText(payload)];
  const named: string[] = [];
  for (const [name, value] of Object.entries(options) as [keyof SqlEnqueueOptions, unknown][]) {
    if (value === undefined) continue;
    values.push(name === "meta" && value !== null ? jsonText(value) : value);
    named.push(`${name} => $${values.length}::${OPTION_TYPES[name]}`);
  }
  const text = `SELECT "${schema}".enqueue($1::text, $2::jsonb${named.map((argument) => `, ${argument}`).join("")})::text AS id`;
  try {
    const { rows } = await client.query<{ id: string }>(text, values);
    return { id: rows[0]!.id };
  } catch (thrown) {
    const error = thrown as pg.DatabaseError;
    if (typeof error.severity !== "string") throw thrown;
    return { refused: { code: error.code, column: error.column, message: error.message } };
  }
}

/** JSON text to send as the payload as it is, rather than a value to stringify. */
export class JsonText {
  constructor(readonly text: string) {}
}

/** The payload as the JSON text sent for `$2`. */
function payloadText(payload: unknown): string | null {
  return payload === null ? null : jsonText(payload);
}

function jsonText(value: unknown): string {
  return value instanceof JsonText ? value.text : JSON.stringify(value);
}
