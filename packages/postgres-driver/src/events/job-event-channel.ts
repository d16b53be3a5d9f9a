import { assertSqlIdentifier } from "@stint/core/driver";

/** PostgreSQL truncates channel names to 63 bytes (NAMEDATALEN - 1). */
const MAX_CHANNEL_LENGTH = 63;

/**
 * The LISTEN/NOTIFY channel on which a schema sends job events:
 * `stint_events_<schema>`, cut to 63 characters (migration 17's
 * `notify_job_events` sends on it).
 *
 * @example
 * ```ts
 * jobEventChannel("stint"); // "stint_events_stint"
 * ```
 */
export function jobEventChannel(schema: string): string {
  return `stint_events_${assertSqlIdentifier(schema, "schema")}`.slice(0, MAX_CHANNEL_LENGTH);
}
