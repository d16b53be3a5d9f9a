import type { DeleteFinishedBeforeParams } from "@stint/core/driver";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { attemptsTable } from "./attempt-history";
import { jobLogsTable } from "./list-job-logs";
import { millisecondsInterval } from "./job-row";
import { sparedQueues } from "./retention-plan";

/**
 * A table finished jobs are deleted from row by row: `jobs` (rows finished
 * before migration 15 and not moved yet), `finished_jobs` (every partition),
 * or one partition of it, such as `finished_jobs_kept`.
 */
export type FinishedRowsTable = "jobs" | "finished_jobs" | (string & {});

/**
 * Deletes at most `limit` finished jobs of `table` in `states` whose
 * `finished_at` is older than `now() - olderThanMs` (of `queues`, or not of
 * `exceptQueues`, when given), oldest first, and
 * returns how many it deleted. The same statement deletes the deleted jobs'
 * attempt history (`job_attempts`, through `job_attempts_job_idx`), and any
 * `job_waiters` rows a waiting process left behind when it died.
 *
 * Bounded and out of the workers' way: dead and cancelled candidates come
 * from the table's partial index on (state, finished_at) —
 * `jobs_finished_idx`, or `finished_jobs_dead_idx` and its copy in each
 * partition —, one ordered range per state, never a scan of the old rows.
 * Succeeded jobs are in no such index (it would cost every completion an
 * insert): they are found by walking the id index from the oldest id,
 * which stops after `limit` matches; the rows it steps over are the older
 * jobs kept for other reasons, few in a healthy queue. Candidates are then
 * locked `FOR UPDATE SKIP LOCKED` with their state and age checked again,
 * so a job that an operator retried in the meantime is never deleted, and
 * a row another transaction holds is skipped instead of waited for.
 *
 * @example
 * ```ts
 * const week = 7 * 24 * 3_600_000;
 * while ((await deleteFinishedRows(db, "stint", "finished_jobs_kept", { states: ["dead"], olderThanMs: week, limit: 1_000 })) === 1_000);
 * ```
 */
export async function deleteFinishedRows(db: Kysely<any>, schema: string, table: FinishedRowsTable, params: DeleteFinishedBeforeParams): Promise<number> {
  if (params.states.length === 0 || params.queues?.length === 0 || params.limit <= 0) return 0;
  return db.transaction().execute(async (trx) => {
    await WALK_INDEXES.execute(trx);
    const { rows } = await deleteFinishedRowsStatement(schema, table, params).execute(trx);
    return Number(rows[0]?.deleted ?? 0);
  });
}

/**
 * Run before the statement, in its transaction: every branch has an index
 * that returns rows in the order wanted, so a sequential scan is never the
 * better plan, but with stale statistics (a new table, a burst of
 * completions) the planner may think a small table is cheaper to scan and
 * sort. The setting lasts until the transaction ends.
 */
export const WALK_INDEXES: RawBuilder<unknown> = sql`SET LOCAL enable_seqscan = off`;

/** The statement of {@link deleteFinishedRows} (exported for plan tests and `EXPLAIN`). */
export function deleteFinishedRowsStatement(schema: string, table: FinishedRowsTable, params: DeleteFinishedBeforeParams): RawBuilder<{ deleted: string }> {
  const from = sql.id(schema, table);
  const states = [...new Set(params.states)];
  const indexed = states.filter((state) => state !== "succeeded");
  const cutoff = sql`now() - ${millisecondsInterval(params.olderThanMs)}`;
  const queueFilter = params.queues === undefined ? sparedQueues(params) : sql`AND queue = ANY(${[...params.queues]}::text[])`;
  const limit = sql`${params.limit}::integer`;
  const byFinishedIndex = sql`SELECT old.id, old.finished_at
      FROM unnest(${indexed}::text[]) AS wanted(state)
     CROSS JOIN LATERAL (
       SELECT id, finished_at FROM ${from}
        WHERE state = wanted.state AND state IN ('dead', 'cancelled')
          AND finished_at < ${cutoff} ${queueFilter}
        ORDER BY finished_at
        LIMIT ${limit}
     ) AS old`;
  const byOldestId = sql`(SELECT id, finished_at FROM ${from}
      WHERE state = 'succeeded' AND finished_at < ${cutoff} ${queueFilter}
      ORDER BY id
      LIMIT ${limit})`;
  const branches = [...(indexed.length > 0 ? [byFinishedIndex] : []), ...(states.includes("succeeded") ? [byOldestId] : [])];
  return sql<{ deleted: string }>`WITH candidates AS MATERIALIZED (
  SELECT old.id
    FROM (${sql.join(
      branches,
      sql`
    UNION ALL
    `,
    )}) AS old
   ORDER BY old.finished_at
   LIMIT ${limit}
),
doomed AS MATERIALIZED (
  SELECT id FROM ${from}
   WHERE id = ANY(ARRAY(SELECT id FROM candidates))
     AND state = ANY(${states}::text[]) AND finished_at < ${cutoff}
   FOR UPDATE SKIP LOCKED
),
deleted AS (
  DELETE FROM ${from} AS target USING doomed
   WHERE target.id = doomed.id AND target.finished_at < ${cutoff}
  RETURNING target.id
),
history AS (
  DELETE FROM ${attemptsTable(schema)} WHERE job_id = ANY(ARRAY(SELECT id FROM deleted))
),
waiters AS (
  DELETE FROM ${sql.id(schema, "job_waiters")} WHERE job_id = ANY(ARRAY(SELECT id FROM deleted))
),
logs AS (
  DELETE FROM ${jobLogsTable(schema)} WHERE job_id = ANY(ARRAY(SELECT id FROM deleted))
)
SELECT count(*) AS deleted FROM deleted`;
}
