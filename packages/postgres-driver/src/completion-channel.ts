import { assertSqlIdentifier } from "@stint/core/driver";

/** PostgreSQL truncates channel names to 63 bytes (NAMEDATALEN - 1). */
const MAX_CHANNEL_LENGTH = 63;

/**
 * The LISTEN/NOTIFY channel on which a schema announces finished jobs that
 * somebody waits for: `stint_done_<schema>`, cut to 63 characters. The
 * payload of each notification is a comma-separated list of job ids (see
 * migration 8's `notify_awaited`).
 *
 * @example
 * ```ts
 * completionChannel("stint"); // "stint_done_stint"
 * ```
 */
export function completionChannel(schema: string): string {
  return `stint_done_${assertSqlIdentifier(schema, "schema")}`.slice(0, MAX_CHANNEL_LENGTH);
}
