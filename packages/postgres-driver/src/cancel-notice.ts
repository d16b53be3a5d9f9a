import type { CancelledAttempt } from "@stint/core/driver";
import { sql, type RawBuilder } from "kysely";

/**
 * How a notice that a running attempt was cancelled starts, on the
 * schema's wake-up channel (see `wakeupChannel`): `!cancel `, then a JSON
 * object `{"id", "attempt", "queue", "workerId"}`. A queue name starts with
 * a lower-case letter or a digit (see `assertQueueName`), so no notice can
 * be read as a queue's wake-up, and no wake-up as a notice.
 */
export const CANCEL_NOTICE_PREFIX = "!cancel ";

/**
 * The notice's text for a row of `source` (a CTE with the job's `id`,
 * `attempts`, `queue` and `locked_by`), as a SQL expression for
 * `pg_notify`: `'!cancel ' || json_build_object(…)::text`.
 *
 * @example
 * ```ts
 * sql`SELECT pg_notify(${wakeupChannel(schema)}, ${cancelNotice("cancelled")}) FROM cancelled WHERE state = 'running'`;
 * ```
 */
export function cancelNotice(source: string): RawBuilder<string> {
  const column = (name: string): RawBuilder<unknown> => sql.ref(`${source}.${name}`);
  return sql<string>`${CANCEL_NOTICE_PREFIX}::text || json_build_object('id', ${column("id")}::text, 'attempt', ${column("attempts")}, 'queue', ${column(
    "queue",
  )}, 'workerId', ${column("locked_by")})::text`;
}

/**
 * The cancelled attempt a notification's payload names, or `undefined`
 * when the payload is not a well-formed cancel notice (a queue's wake-up,
 * say).
 *
 * @example
 * ```ts
 * parseCancelNotice('!cancel {"id" : "812", "attempt" : 1, "queue" : "send-invoice", "workerId" : "9b1e03aa"}');
 * // { id: "812", attempt: 1, queue: "send-invoice", workerId: "9b1e03aa" }
 * ```
 */
export function parseCancelNotice(payload: string): CancelledAttempt | undefined {
  if (!payload.startsWith(CANCEL_NOTICE_PREFIX)) return undefined;
  let notice: unknown;
  try {
    notice = JSON.parse(payload.slice(CANCEL_NOTICE_PREFIX.length));
  } catch {
    return undefined;
  }
  if (typeof notice !== "object" || notice === null) return undefined;
  const { id, attempt, queue, workerId } = notice as Record<string, unknown>;
  if (typeof id !== "string" || !/^[0-9]+$/.test(id)) return undefined;
  if (typeof attempt !== "number" || !Number.isInteger(attempt) || attempt < 1) return undefined;
  if (typeof queue !== "string" || typeof workerId !== "string") return undefined;
  return Object.freeze({ id, attempt, queue, workerId });
}
