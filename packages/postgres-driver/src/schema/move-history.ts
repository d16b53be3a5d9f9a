import type { Kysely } from "kysely";
import { sql } from "kysely";
import { isFinished } from "../queries/active-states";
import { jobsTable } from "../queries/job-row";
import { moveFinishedJobs } from "../queries/move-finished-jobs";

/** How far a {@link moveHistory} run has got. */
export interface HistoryProgress {
  /** Finished jobs moved so far by this run. */
  readonly moved: number;
  /**
   * How many there were to move when the run started (a count, so an
   * estimate: workers of an older version may finish more meanwhile, and
   * operators may retry or delete some).
   */
  readonly total: number;
}

/** Options of {@link moveHistory}. */
export interface MoveHistoryOptions {
  /** Rows per statement (each its own short transaction). */
  readonly batchSize: number;
  /** Called after the count and after every batch. */
  readonly onProgress?: (progress: HistoryProgress) => void;
  /** Stops the run between two batches; what was moved stays moved. */
  readonly signal?: AbortSignal;
}

/** What a {@link moveHistory} run did. */
export interface MovedHistory {
  readonly moved: number;
  /** `signal` stopped the run before every finished job was moved. */
  readonly interrupted: boolean;
}

/**
 * Moves every finished job still in `jobs` (see `moveFinishedJobs`) to
 * `finished_jobs`, a batch per statement, while workers keep running:
 * first up the ids, each batch after the last one's end, then once more
 * from the lowest id for the rows an earlier batch skipped because someone
 * held them locked, or that a worker of an older version finished behind
 * it. Each batch commits on its own, so a run that stops (an abort, a lost
 * connection, a killed process) leaves nothing half-moved, and the next run
 * carries on with what is left. A run that moved rows ends with a `VACUUM
 * (ANALYZE)` of `jobs`.
 *
 * @example
 * ```ts
 * const { moved } = await moveHistory(db, "stint", { batchSize: 5_000, onProgress: ({ moved, total }) => console.log(moved, total) });
 * ```
 */
export async function moveHistory(db: Kysely<any>, schema: string, options: MoveHistoryOptions): Promise<MovedHistory> {
  const { rows } = await sql<{ total: string }>`SELECT count(*) AS total FROM ${jobsTable(schema)}
   WHERE ${isFinished()}`.execute(db);
  const total = Number(rows[0]?.total ?? 0);
  if (total === 0) return Object.freeze({ moved: 0, interrupted: false });
  // Each batch walks the primary key from where the last one ended only if the planner knows that most rows are
  // finished ones; without statistics (a table filled since its last analyze) it reads and sorts the whole table
  // for every batch instead, many times slower (see docs/benchmarks.md, Figures behind the code).
  await sql`ANALYZE ${jobsTable(schema)}`.execute(db);
  options.onProgress?.({ moved: 0, total });
  let moved = 0;
  for (let pass = 1; pass <= 2; pass += 1) {
    let afterId: string | undefined;
    for (;;) {
      if (options.signal?.aborted === true) return Object.freeze({ moved, interrupted: true });
      const batch = await moveFinishedJobs(db, schema, { limit: options.batchSize, ...(afterId === undefined ? {} : { afterId }) });
      moved += batch.moved;
      afterId = batch.lastId ?? afterId;
      if (batch.moved > 0) options.onProgress?.({ moved, total });
      if (batch.moved < options.batchSize) break;
    }
  }
  // The moved rows leave as many dead row versions in jobs; vacuumed now, the hot table is back to the size of the
  // work in flight at once, rather than when autovacuum next comes by. VACUUM blocks no reads or writes.
  if (moved > 0) await sql`VACUUM (ANALYZE) ${jobsTable(schema)}`.execute(db);
  return Object.freeze({ moved, interrupted: false });
}
