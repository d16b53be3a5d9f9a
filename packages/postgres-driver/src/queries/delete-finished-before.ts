import { sql, type Kysely, type RawBuilder } from "kysely";
import { attemptsTable } from "./attempt-history";
import { jobsTable, millisecondsInterval } from "./job-row";

/** The states retention may delete. */
export type FinishedState = "succeeded" | "dead" | "cancelled";

/** What {@link deleteFinishedBefore} takes. */
export interface DeleteFinishedBeforeParams {
  /** Delete jobs in these states (finished ones only). */
  readonly states: readonly FinishedState[];
  /** Whose `finished_at` is older than this many milliseconds. */
  readonly olderThanMs: number;
  /** At most this many per call. */
  readonly limit: number;
  /** Only these queues; all queues when left out. */
  readonly queues?: readonly string[];
}

/**
 * Deletes at most `limit` finished jobs in `states` whose `finished_at` is
 * older than `now() - olderThanMs`, oldest first, and returns how many it
 * deleted. Call it again until it returns less than `limit`. The same
 * statement deletes the deleted jobs' attempt history (`job_attempts`,
 * through `job_attempts_job_idx`).
 *
 * Bounded and out of the workers' way: candidates come from
 * `jobs_finished_idx` (state, finished_at) — one ordered range per state,
 * never a scan of the old rows — and are then locked `FOR UPDATE SKIP
 * LOCKED` with their state and age checked again, so a job that an operator
 * retried in the meantime (active again) is never deleted, and a row
 * another transaction holds is skipped instead of waited for. Active rows
 * are never read or locked, so the claim path never waits for retention.
 *
 * ### SQL
 * ```sql
 * WITH candidates AS MATERIALIZED (
 *   SELECT old.id FROM unnest($1::text[]) AS wanted(state)
 *   CROSS JOIN LATERAL (
 *     SELECT id, finished_at FROM "stint"."jobs"
 *      WHERE state = wanted.state AND state IN ('succeeded', 'dead', 'cancelled')
 *        AND finished_at < now() - $2 * interval '1 millisecond' [AND queue = ANY($4::text[])]
 *      ORDER BY finished_at LIMIT $3) AS old
 *   ORDER BY old.finished_at LIMIT $3),
 * doomed AS MATERIALIZED (
 *   SELECT id FROM "stint"."jobs"
 *    WHERE id = ANY(ARRAY(SELECT id FROM candidates))
 *      AND state = ANY($1::text[]) AND finished_at < now() - $2 * interval '1 millisecond'
 *    FOR UPDATE SKIP LOCKED),
 * deleted AS (DELETE FROM "stint"."jobs" AS jobs USING doomed WHERE jobs.id = doomed.id RETURNING jobs.id),
 * history AS (DELETE FROM "stint"."job_attempts" WHERE job_id = ANY(ARRAY(SELECT id FROM deleted)))
 * SELECT count(*) AS deleted FROM deleted
 * ```
 *
 * @example
 * ```ts
 * const week = 7 * 24 * 3_600_000;
 * while ((await deleteFinishedBefore(db, "stint", { states: ["succeeded"], olderThanMs: week, limit: 1_000 })) === 1_000);
 * ```
 */
export async function deleteFinishedBefore(executor: Kysely<any>, schema: string, params: DeleteFinishedBeforeParams): Promise<number> {
  if (params.states.length === 0 || params.queues?.length === 0) return 0;
  const { rows } = await deleteFinishedBeforeStatement(schema, params).execute(executor);
  return Number(rows[0]?.deleted ?? 0);
}

/** The statement itself (exported for plan tests and `EXPLAIN`). */
export function deleteFinishedBeforeStatement(schema: string, params: DeleteFinishedBeforeParams): RawBuilder<{ deleted: string }> {
  const jobs = jobsTable(schema);
  const states = [...new Set(params.states)];
  const cutoff = sql`now() - ${millisecondsInterval(params.olderThanMs)}`;
  const queueFilter = params.queues === undefined ? sql`` : sql`AND queue = ANY(${[...params.queues]}::text[])`;
  return sql<{ deleted: string }>`WITH candidates AS MATERIALIZED (
  SELECT old.id
    FROM unnest(${states}::text[]) AS wanted(state)
   CROSS JOIN LATERAL (
     SELECT id, finished_at FROM ${jobs}
      WHERE state = wanted.state AND state IN ('succeeded', 'dead', 'cancelled')
        AND finished_at < ${cutoff} ${queueFilter}
      ORDER BY finished_at
      LIMIT ${params.limit}::integer
   ) AS old
   ORDER BY old.finished_at
   LIMIT ${params.limit}::integer
),
doomed AS MATERIALIZED (
  SELECT id FROM ${jobs}
   WHERE id = ANY(ARRAY(SELECT id FROM candidates))
     AND state = ANY(${states}::text[]) AND finished_at < ${cutoff}
   FOR UPDATE SKIP LOCKED
),
deleted AS (
  DELETE FROM ${jobs} AS jobs USING doomed WHERE jobs.id = doomed.id RETURNING jobs.id
),
history AS (
  DELETE FROM ${attemptsTable(schema)} WHERE job_id = ANY(ARRAY(SELECT id FROM deleted))
)
SELECT count(*) AS deleted FROM deleted`;
}
