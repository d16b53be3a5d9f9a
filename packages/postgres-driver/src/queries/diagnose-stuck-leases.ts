import { sql, type Kysely } from "kysely";
import { jobsTable, millisecondsInterval } from "./job-row";

/** Running jobs whose lease expired more than a grace period ago. */
export interface StuckLeases {
  readonly count: number;
  /** Milliseconds since the oldest of those leases expired, or `null` when there are none. */
  readonly oldestExpiredMs: number | null;
  /** Up to five of their ids, oldest lease first. */
  readonly sampleIds: readonly string[];
}

/**
 * Counts `running` jobs whose lease expired more than `graceMs` ago: no
 * worker heartbeats them and nothing rescued them (is a process with the
 * maintenance duties running?). Reads `jobs_lease_idx`.
 *
 * ### SQL
 * ```sql
 * SELECT count(*) AS stuck, floor(extract(epoch FROM now() - min(locked_until)) * 1000) AS oldest_expired_ms,
 *        (array_agg(id::text ORDER BY locked_until))[1:5] AS sample_ids
 *   FROM "stint"."jobs" WHERE state = 'running' AND locked_until < now() - $1 * interval '1 millisecond'
 * ```
 *
 * @example
 * ```ts
 * const { count } = await readStuckLeases(db, "stint", 300_000);
 * ```
 */
export async function readStuckLeases(executor: Kysely<any>, schema: string, graceMs: number): Promise<StuckLeases> {
  const { rows } = await sql<{ stuck: string; oldest_expired_ms: string | null; sample_ids: string[] | null }>`SELECT
       count(*) AS stuck,
       floor(extract(epoch FROM now() - min(locked_until)) * 1000)::bigint AS oldest_expired_ms,
       (array_agg(id::text ORDER BY locked_until))[1:5] AS sample_ids
  FROM ${jobsTable(schema)}
 WHERE state = 'running' AND locked_until < now() - ${millisecondsInterval(graceMs)}`.execute(executor);
  const row = rows[0];
  return Object.freeze({
    count: Number(row?.stuck ?? 0),
    oldestExpiredMs: row?.oldest_expired_ms == null ? null : Number(row.oldest_expired_ms),
    sampleIds: Object.freeze([...(row?.sample_ids ?? [])]),
  });
}
