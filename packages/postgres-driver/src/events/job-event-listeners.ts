import type { JobEventType } from "@stint/core";
import type { SessionQuery } from "../queries/register-waiters";

/** What one subscription's row in `job_event_listeners` (migration 17) asks for: `null` for all. */
export interface ListenerInterest {
  /** The row's name: the process's prefix and the subscription's number. */
  readonly listener: string;
  readonly queues: readonly string[] | null;
  readonly kinds: readonly JobEventType[] | null;
}

/**
 * Writes (or refreshes) one row per open subscription of a process in
 * `job_event_listeners`, each with the queues and kinds it wants and when
 * it lapses unless written again (`ttlMs` from now, on the database
 * clock), and deletes the process's rows (names starting with `prefix`)
 * that no subscription holds any more, and any row that lapsed.
 * State-changing statements send events only while a live row wants them.
 *
 * ### SQL
 * ```sql
 * WITH wanted AS (SELECT … FROM jsonb_to_recordset($2::jsonb) AS w(listener text, queues jsonb, kinds jsonb)),
 * gone AS (DELETE FROM "stint"."job_event_listeners"
 *           WHERE (starts_with(listener, $1) AND listener <> ALL (SELECT listener FROM wanted)) OR expires_at < now())
 * INSERT INTO "stint"."job_event_listeners" (listener, queues, kinds, expires_at)
 * SELECT listener, queues, kinds, now() + $3 * interval '1 millisecond' FROM wanted
 * ON CONFLICT (listener) DO UPDATE SET queues = excluded.queues, kinds = excluded.kinds, expires_at = excluded.expires_at
 * ```
 *
 * @example
 * ```ts
 * await writeListeners(query, "stint", { prefix, interests: [{ listener: `${prefix}:1`, queues: ["emails"], kinds: null }], ttlMs: 90_000 });
 * ```
 */
export async function writeListeners(
  query: SessionQuery,
  schema: string,
  params: { readonly prefix: string; readonly interests: readonly ListenerInterest[]; readonly ttlMs: number },
): Promise<void> {
  const table = `${quoted(schema)}."job_event_listeners"`;
  await query(
    `WITH wanted AS (
  SELECT w.listener,
         CASE WHEN w.queues IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(w.queues)) END AS queues,
         CASE WHEN w.kinds IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(w.kinds)) END AS kinds
    FROM jsonb_to_recordset($2::jsonb) AS w(listener text, queues jsonb, kinds jsonb)
),
gone AS (
  DELETE FROM ${table}
   WHERE (starts_with(listener, $1::text) AND listener <> ALL (ARRAY(SELECT listener FROM wanted))) OR expires_at < now()
)
INSERT INTO ${table} (listener, queues, kinds, expires_at)
SELECT listener, queues, kinds, now() + $3::integer * interval '1 millisecond' FROM wanted
ON CONFLICT (listener) DO UPDATE SET queues = excluded.queues, kinds = excluded.kinds, expires_at = excluded.expires_at`,
    [params.prefix, JSON.stringify(params.interests), params.ttlMs],
  );
}

/**
 * Deletes a process's rows (names starting with `prefix`), and any row
 * that lapsed (a process that died without deleting its own).
 *
 * ### SQL
 * ```sql
 * DELETE FROM "stint"."job_event_listeners" WHERE starts_with(listener, $1) OR expires_at < now()
 * ```
 *
 * @example
 * ```ts
 * await removeListeners(query, "stint", prefix);
 * ```
 */
export async function removeListeners(query: SessionQuery, schema: string, prefix: string): Promise<void> {
  await query(`DELETE FROM ${quoted(schema)}."job_event_listeners" WHERE starts_with(listener, $1::text) OR expires_at < now()`, [prefix]);
}

/** A validated schema name (lower-case letters, digits and _) as a quoted identifier. */
function quoted(schema: string): string {
  return `"${schema.replace(/"/g, '""')}"`;
}
