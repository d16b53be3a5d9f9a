import type { RetryDeadJobsParams } from "@stint/core/driver";
import { InfrastructureError } from "@stint/core";
import { regroupInsert } from "./line-hold";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { isUniqueViolation } from "../interpret-error";
import { wakeupChannel } from "../wakeup-channel";
import { isActive, MAX_DEDUPE_TRIES } from "./active-states";
import { finishedJobsTable } from "./finished-jobs";
import { jobsTable } from "./job-row";
import { notifyJobEvents } from "./notify-job-events";
import { requeuedEvent, requeuedSet, requeueFinished } from "./requeue-finished";

/**
 * Runs up to `limit` dead jobs of a queue again now, each as `retryJob`
 * would (`queued`, `run_at = now()`, `max_attempts = attempts +
 * max_attempts`, lease and `finished_at` cleared), oldest death first, in
 * one statement; returns how many it queued, wakes the queue's listeners
 * when there were any and tells job-event listeners (`requeued`, reason
 * `retry`, one per job). Dead jobs kept in `finished_jobs` come
 * back to `jobs` under their own ids (see `requeueFinished`); those written
 * before version 15 and still in `jobs` are updated in place.
 *
 * A dead job whose dedupe key an active job of the queue now holds is left
 * dead (where `retryJob` refuses loudly); of several dead jobs sharing a
 * free key, wherever each is kept, only the one that died last is queued.
 * Candidates come from `finished_jobs_dead_idx` and `jobs_finished_idx`
 * and are locked `FOR UPDATE SKIP LOCKED`, rechecking that they are still
 * dead. When an enqueue takes a key at the same moment (a unique
 * violation), the statement runs again, at most `MAX_DEDUPE_TRIES` times.
 *
 * @example
 * ```ts
 * const queued = await retryDeadJobs(db, "stint", { queue: "send-invoice", limit: 500 });
 * ```
 */
export async function retryDeadJobs(executor: Kysely<any>, schema: string, params: RetryDeadJobsParams): Promise<number> {
  const statement = retryDeadJobsStatement(schema, params);
  for (let tries = 1; ; tries += 1) {
    try {
      const { rows } = await statement.execute(executor);
      return Number(rows[0]?.retried ?? 0);
    } catch (thrown) {
      if (!isUniqueViolation(thrown)) throw thrown;
      if (tries >= MAX_DEDUPE_TRIES) {
        throw new InfrastructureError(
          `retryDeadJobs gave up after ${MAX_DEDUPE_TRIES} tries: dedupe keys of queue "${params.queue}" kept being taken by new jobs`,
          { cause: thrown },
        );
      }
    }
  }
}

function retryDeadJobsStatement(schema: string, params: RetryDeadJobsParams): RawBuilder<{ retried: string }> {
  const jobs = jobsTable(schema);
  const finished = finishedJobsTable(schema);
  // Each table gives at most `limit` of its oldest deaths, so each scan stops early; the union keeps the oldest of both.
  const deadOf = (table: RawBuilder<unknown>): RawBuilder<unknown> => sql`SELECT dead.id, dead.dedupe_key, dead.finished_at FROM ${table} AS dead
     WHERE dead.queue = ${params.queue} AND dead.state = 'dead'
       AND NOT EXISTS (
         SELECT 1 FROM ${jobs} AS holder
          WHERE holder.queue = dead.queue AND holder.dedupe_key = dead.dedupe_key AND ${isActive(sql.ref("holder.state"))}
       )
     ORDER BY dead.finished_at
     LIMIT ${params.limit}::integer`;
  return sql<{ retried: string }>`WITH eligible AS MATERIALIZED (
  SELECT id, dedupe_key, finished_at FROM (
    (${deadOf(finished)})
    UNION ALL
    (${deadOf(jobs)})
  ) AS dead
   ORDER BY finished_at
   LIMIT ${params.limit}::integer
),
chosen AS MATERIALIZED (
  SELECT ranked.id FROM (
    SELECT id, dedupe_key, row_number() OVER (PARTITION BY dedupe_key ORDER BY finished_at DESC, id DESC) AS rank
      FROM eligible
  ) AS ranked
   WHERE ranked.dedupe_key IS NULL OR ranked.rank = 1
),
picked AS MATERIALIZED (
  SELECT id FROM ${finished}
   WHERE id = ANY(ARRAY(SELECT id FROM chosen)) AND state = 'dead'
   FOR UPDATE SKIP LOCKED
),
picked_in_place AS MATERIALIZED (
  SELECT id FROM ${jobs}
   WHERE id = ANY(ARRAY(SELECT id FROM chosen)) AND state = 'dead'
   FOR UPDATE SKIP LOCKED
),
removed AS (
  DELETE FROM ${finished}
   WHERE id = ANY(ARRAY(SELECT id FROM picked)) AND state = 'dead'
  RETURNING *
),
returned AS (
  ${requeueFinished(schema, "removed")}
  RETURNING id, queue, attempts
),
requeued AS (
  UPDATE ${jobs} AS jobs
     SET ${requeuedSet(sql.id("jobs"))}
    FROM picked_in_place
   WHERE jobs.id = picked_in_place.id
  RETURNING jobs.id, jobs.queue, jobs.attempts, jobs.group_key, jobs.serial
),
regrouped AS (
  ${regroupInsert(schema, "requeued")}
),
retried AS (
  SELECT id, queue, attempts FROM returned UNION ALL SELECT id, queue, attempts FROM requeued
),
notified AS (
  SELECT pg_notify(${wakeupChannel(schema)}, ${params.queue}) FROM (SELECT 1 FROM retried LIMIT 1) AS any_retried
)
SELECT (SELECT count(*) FROM retried) AS retried, (SELECT count(*) FROM notified) AS notified,
       ${notifyJobEvents(schema, sql`retried`, requeuedEvent("retry"))} AS told`;
}
