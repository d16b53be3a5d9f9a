import { assertSqlIdentifier } from "@stint/core/driver";

/** PostgreSQL truncates channel names to 63 bytes (NAMEDATALEN - 1). */
const MAX_CHANNEL_LENGTH = 63;

/**
 * The LISTEN/NOTIFY channel on which a schema announces due jobs:
 * `stint_jobs_<schema>`, cut to 63 characters. The trigger installed by
 * migration 2 computes the same string in SQL
 * (`left('stint_jobs_' || TG_TABLE_SCHEMA, 63)`); the payload of each
 * notification is a queue name.
 *
 * @example
 * ```ts
 * wakeupChannel("stint"); // "stint_jobs_stint"
 * await client.query(`LISTEN ${client.escapeIdentifier(wakeupChannel("stint"))}`);
 * ```
 */
export function wakeupChannel(schema: string): string {
  return `stint_jobs_${assertSqlIdentifier(schema, "schema")}`.slice(0, MAX_CHANNEL_LENGTH);
}
