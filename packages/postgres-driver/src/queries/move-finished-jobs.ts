import { sql, type Kysely, type RawBuilder } from "kysely";
import { isFinished } from "./active-states";
import { moveToFinished } from "./finished-jobs";
import { withHistoryLock } from "./history-lock";
import { jobsTable } from "./job-row";

/** What {@link moveFinishedJobs} is asked to move. */
export interface MoveFinishedJobsParams {
  /** Most rows the call moves, in its one statement. */
  readonly limit: number;
  /**
   * Only rows of a larger id: where the caller's previous batch ended (its
   * `lastId`), so a run of batches does not walk again past the ids it has
   * emptied. Default: from the lowest id.
   */
  readonly afterId?: string;
}

/** What one {@link moveFinishedJobs} call moved. */
export interface MovedFinishedJobs {
  readonly moved: number;
  /** The largest id it moved; `undefined` when it moved none. */
  readonly lastId: string | undefined;
}

/**
 * Moves up to `limit` finished jobs (`succeeded`, `dead`, `cancelled`) that
 * are still in `jobs` — rows written before version 15, or later by a
 * worker of an older version — to `finished_jobs`, oldest id first, and
 * returns how many it moved and the last id. Each row keeps its id and
 * every value; one whose `finished_at` is missing gets its `updated_at`
 * there (a finished row must have one to find its partition).
 *
 * First it makes sure the day partition of every day the batch's rows
 * finished on exists (`ensure_history_partitions`, which lets callers take
 * turns), so the rows land in their day's partition rather than in
 * `finished_jobs_kept`. When the history is too busy to wait for (see
 * `withHistoryLock`) the batch moves all the same: a row whose day has no
 * partition yet goes to `finished_jobs_kept`, from which the day's
 * partition takes it when it is created.
 *
 * Then one statement moves them: candidates locked `FOR UPDATE SKIP
 * LOCKED`, deleted with their state checked again, and inserted in
 * `finished_jobs` by the same statement. A row an operator is retrying at
 * that moment is skipped, never moved, and no reader ever finds a job in
 * both tables or in neither. Workers keep running: the statement locks
 * only the rows it moves.
 *
 * `db` must be a Kysely instance, not a transaction: the two steps are
 * separate transactions.
 *
 * @example
 * ```ts
 * let batch = await moveFinishedJobs(db, "stint", { limit: 5_000 });
 * while (batch.moved === 5_000) batch = await moveFinishedJobs(db, "stint", { limit: 5_000, afterId: batch.lastId });
 * ```
 */
export async function moveFinishedJobs(db: Kysely<any>, schema: string, params: MoveFinishedJobsParams): Promise<MovedFinishedJobs> {
  const after = params.afterId ?? "0";
  await withHistoryLock(db, (trx) => ensureBatchPartitions(schema, after, params.limit).execute(trx));
  const { rows } = await moveStatement(schema, after, params.limit).execute(db);
  const moved = Number(rows[0]?.moved ?? 0);
  return Object.freeze({ moved, lastId: moved === 0 ? undefined : String(rows[0]?.last_id) });
}

/** The rows the next batch will move, oldest id first: the same ones the move statement picks, unless some are locked by then. */
function nextBatch(schema: string, columns: RawBuilder<unknown>, after: string, limit: number): RawBuilder<unknown> {
  return sql`SELECT ${columns} FROM ${jobsTable(schema)}
   WHERE ${isFinished()} AND id > ${after}::bigint
   ORDER BY id
   LIMIT ${limit}::integer`;
}

/**
 * Creates the missing day partitions of the days the next batch finished
 * on, a day at a time, in order. A row that finished on a day this misses
 * (one that a worker of an older version finishes meanwhile), or at an
 * infinite time, goes to `finished_jobs_kept`, which is still a correct
 * place for it.
 */
function ensureBatchPartitions(schema: string, after: string, limit: number): RawBuilder<unknown> {
  return sql`SELECT ${sql.id(schema, "ensure_history_partitions")}(day, day) FROM (
  SELECT DISTINCT (coalesce(finished_at, updated_at) AT TIME ZONE 'UTC')::date AS day
    FROM (${nextBatch(schema, sql`finished_at, updated_at`, after, limit)}) AS batch
) AS days
 WHERE isfinite(day)
 ORDER BY day`;
}

function moveStatement(schema: string, after: string, limit: number): RawBuilder<{ moved: string; last_id: string | null }> {
  const jobs = jobsTable(schema);
  return sql<{ moved: string; last_id: string | null }>`WITH candidates AS MATERIALIZED (
  ${nextBatch(schema, sql`id`, after, limit)}
   FOR UPDATE SKIP LOCKED
),
removed AS (
  DELETE FROM ${jobs} AS jobs
   WHERE jobs.id = ANY(ARRAY(SELECT id FROM candidates)) AND ${isFinished(sql.ref("jobs.state"))}
  RETURNING jobs.*
),
moved AS (
  ${moveToFinished(schema, "removed", { finished_at: sql`coalesce(removed.finished_at, removed.updated_at)` })}
)
SELECT count(*) AS moved, max(id)::text AS last_id FROM removed`;
}
