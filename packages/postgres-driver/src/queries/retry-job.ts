import type { JobIdParams } from "@stint/core/driver";
import { DatabaseError } from "@stint/core";
import { regroupInsert } from "./line-hold";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { isUniqueViolation } from "../interpret-error";
import { wakeupChannel } from "../wakeup-channel";
import { isActive } from "./active-states";
import { finishedJobsTable } from "./finished-jobs";
import { joinNotifying } from "./notify-job-events";
import { isJobId, jobsTable } from "./job-row";
import { requeuedEvent, requeuedSet, requeueFinished } from "./requeue-finished";

interface RetryRow {
  readonly retried_id: string | null;
  readonly holder_id: string | null;
  readonly state: string | null;
  readonly queue: string | null;
  readonly dedupe_key: string | null;
}

const RETRYABLE_STATES = new Set(["dead", "cancelled", "failed"]);

/**
 * How many times the statement runs for a job it found retryable but could
 * not retry, with no other job holding its key: the job left the table the
 * statement's snapshot saw it in (the history mover took it from `jobs` to
 * `finished_jobs`, or another retry took it back) after that snapshot, so a
 * new snapshot finds it where it went.
 */
const MAX_LOOKUPS = 3;

/**
 * Runs a `dead`, `cancelled` or `failed` job again now, with a fresh attempt
 * budget (`max_attempts = attempts + max_attempts`), as `queued` with its
 * lease and `finished_at` cleared, wakes the queue's listeners and tells
 * job-event listeners (`requeued`, reason `retry`). Returns
 * false when the job does not exist or is not in one of those states.
 *
 * A finished job kept in `finished_jobs` comes back to `jobs` under its own
 * id in the same statement (see `requeueFinished`); a `failed` job, and a
 * finished one written before version 15 that is still in `jobs`, is
 * updated in place.
 *
 * A job whose dedupe key is now held by another active job of its queue is
 * not retried silently: this throws a `DatabaseError` (SQLSTATE 23505) naming
 * the job that holds the key.
 *
 * @example
 * ```ts
 * await retryJob(db, "stint", { id: "812" }); // true: job 812 is queued again
 * ```
 */
export async function retryJob(executor: Kysely<any>, schema: string, params: JobIdParams): Promise<boolean> {
  if (!isJobId(params.id)) return false;
  const statement = retryJobStatement(schema, params.id);
  for (let lookups = 1; ; lookups += 1) {
    let row: RetryRow | undefined;
    try {
      ({
        rows: [row],
      } = await statement.execute(executor));
    } catch (thrown) {
      if (isUniqueViolation(thrown)) throw keyTaken(params.id, null, null, thrown);
      throw thrown;
    }
    if (row === undefined) return false;
    if (row.retried_id !== null) return true;
    if (row.state === null || !RETRYABLE_STATES.has(row.state)) return false;
    if (row.holder_id !== null) throw keyTaken(params.id, row, row.holder_id, undefined);
    if (lookups >= MAX_LOOKUPS) return false;
  }
}

function retryJobStatement(schema: string, id: string): RawBuilder<RetryRow> {
  const jobs = jobsTable(schema);
  const finished = finishedJobsTable(schema);
  return sql<RetryRow>`WITH target AS (
  SELECT id, queue, dedupe_key, state FROM ${jobs} WHERE id = ${id}::bigint
  UNION ALL
  SELECT id, queue, dedupe_key, state FROM ${finished} WHERE id = ${id}::bigint
  LIMIT 1
),
holder AS (
  SELECT other.id FROM ${jobs} AS other JOIN target ON other.queue = target.queue AND other.dedupe_key = target.dedupe_key
   WHERE ${isActive(sql.ref("other.state"))} AND other.id <> target.id
   LIMIT 1
),
requeued AS (
  UPDATE ${jobs} AS jobs
     SET ${requeuedSet(sql.id("jobs"))}
   WHERE id = ${id}::bigint AND state IN ('dead', 'cancelled', 'failed')
     AND NOT EXISTS (SELECT 1 FROM holder)
  RETURNING id, queue, attempts, group_key, serial
),
regrouped AS (
  ${regroupInsert(schema, "requeued")}
),
removed AS (
  DELETE FROM ${finished}
   WHERE id = ${id}::bigint AND state IN ('dead', 'cancelled')
     AND NOT EXISTS (SELECT 1 FROM holder)
  RETURNING *
),
returned AS (
  ${requeueFinished(schema, "removed")}
  RETURNING id, queue, attempts
),
retried AS (
  SELECT id, queue, attempts FROM requeued UNION ALL SELECT id, queue, attempts FROM returned
),
notified AS (
  SELECT pg_notify(${wakeupChannel(schema)}, target.queue) FROM retried, target
)
SELECT (SELECT id FROM retried LIMIT 1) AS retried_id, (SELECT id FROM holder) AS holder_id,
       target.state, target.queue, target.dedupe_key, (SELECT count(*) FROM notified) AS notified
  FROM target
 ${joinNotifying(schema, sql`retried`, requeuedEvent("retry"))}`;
}

function keyTaken(id: string, row: RetryRow | null, holderId: string | null, cause: unknown): DatabaseError {
  const key = row === null ? "its dedupe key" : `its dedupe key ${JSON.stringify(row.dedupe_key)} of queue "${row.queue}"`;
  const holder = holderId === null ? "another active job" : `active job ${holderId}`;
  return new DatabaseError(`cannot retry job ${id}: ${key} is now held by ${holder}; cancel or finish that job first`, { sqlState: "23505", cause });
}
