import type { JobIdParams } from "@stint/core/driver";
import { DatabaseError } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { isUniqueViolation } from "../interpret-error";
import { wakeupChannel } from "../wakeup-channel";
import { isActive } from "./active-states";
import { isJobId, jobsTable } from "./job-row";

interface RetryRow {
  readonly retried_id: string | null;
  readonly holder_id: string | null;
  readonly state: string | null;
  readonly queue: string | null;
  readonly dedupe_key: string | null;
}

const RETRYABLE_STATES = new Set(["dead", "cancelled", "failed"]);

/**
 * Runs a `dead`, `cancelled` or `failed` job again now, with a fresh attempt
 * budget (`max_attempts = attempts + max_attempts`), as `queued` with its
 * lease and `finished_at` cleared, and wakes the queue's listeners. Returns
 * false when the job does not exist or is not in one of those states.
 *
 * A job whose dedupe key is now held by another active job of its queue is
 * not retried silently: this throws a `DatabaseError` (SQLSTATE 23505) naming
 * the job that holds the key.
 *
 * ### SQL
 * ```sql
 * WITH target AS (SELECT id, queue, dedupe_key, state FROM "stint"."jobs" WHERE id = $1),
 * holder AS (SELECT other.id FROM "stint"."jobs" AS other JOIN target USING (queue, dedupe_key)
 *             WHERE other.state IN ('queued', 'running', 'failed') AND other.id <> target.id LIMIT 1),
 * retried AS (
 *   UPDATE "stint"."jobs" SET state = 'queued', run_at = now(), max_attempts = attempts + max_attempts,
 *          locked_by = NULL, locked_until = NULL, finished_at = NULL, updated_at = now()
 *    WHERE id = $1 AND state IN ('dead', 'cancelled', 'failed') AND NOT EXISTS (SELECT 1 FROM holder)
 *   RETURNING id),
 * notified AS (SELECT pg_notify($2, target.queue) FROM retried, target)
 * SELECT (SELECT id FROM retried) AS retried_id, (SELECT id FROM holder) AS holder_id, target.* …
 * ```
 *
 * @example
 * ```ts
 * await retryJob(db, "stint", { id: "812" }); // true: job 812 is queued again
 * ```
 */
export async function retryJob(executor: Kysely<any>, schema: string, params: JobIdParams): Promise<boolean> {
  if (!isJobId(params.id)) return false;
  const jobs = jobsTable(schema);
  let row: RetryRow | undefined;
  try {
    ({
      rows: [row],
    } = await sql<RetryRow>`WITH target AS (
  SELECT id, queue, dedupe_key, state FROM ${jobs} WHERE id = ${params.id}::bigint
),
holder AS (
  SELECT other.id FROM ${jobs} AS other JOIN target ON other.queue = target.queue AND other.dedupe_key = target.dedupe_key
   WHERE ${isActive(sql.ref("other.state"))} AND other.id <> target.id
   LIMIT 1
),
retried AS (
  UPDATE ${jobs}
     SET state = 'queued', run_at = now(), max_attempts = attempts + max_attempts,
         locked_by = NULL, locked_until = NULL, finished_at = NULL, updated_at = now()
   WHERE id = ${params.id}::bigint AND state IN ('dead', 'cancelled', 'failed')
     AND NOT EXISTS (SELECT 1 FROM holder)
  RETURNING id
),
notified AS (
  SELECT pg_notify(${wakeupChannel(schema)}, target.queue) FROM retried, target
)
SELECT (SELECT id FROM retried) AS retried_id, (SELECT id FROM holder) AS holder_id,
       target.state, target.queue, target.dedupe_key, (SELECT count(*) FROM notified) AS notified
  FROM target`.execute(executor));
  } catch (thrown) {
    if (isUniqueViolation(thrown)) throw keyTaken(params.id, null, null, thrown);
    throw thrown;
  }
  if (row === undefined) return false;
  if (row.retried_id !== null) return true;
  if (row.holder_id !== null && row.state !== null && RETRYABLE_STATES.has(row.state)) {
    throw keyTaken(params.id, row, row.holder_id, undefined);
  }
  return false;
}

function keyTaken(id: string, row: RetryRow | null, holderId: string | null, cause: unknown): DatabaseError {
  const key = row === null ? "its dedupe key" : `its dedupe key ${JSON.stringify(row.dedupe_key)} of queue "${row.queue}"`;
  const holder = holderId === null ? "another active job" : `active job ${holderId}`;
  return new DatabaseError(`cannot retry job ${id}: ${key} is now held by ${holder}; cancel or finish that job first`, { sqlState: "23505", cause });
}
