import { sql, type Kysely, type RawBuilder } from "kysely";
import type { HistoryPartition } from "./history-partitions";
import { MAX_KEPT_PER_DROP, type RetentionPass } from "./retention-plan";

/** How a day partition wholly past a pass's cutoff goes. */
export interface PartitionSurvey {
  /** Dropped whole (true), or its rows of the pass's states deleted row by row (false). */
  readonly drop: boolean;
  /** Rows of other states it holds, which a drop puts back into `finished_jobs_kept`; exact when `drop`. */
  readonly kept: number;
}

/**
 * Decides whether a day partition wholly past the cutoff of a pass deleting
 * `states` is dropped whole: when the rows that must outlive it (the other
 * states', and the pass's `exceptQueues`' rows in its states) are at most
 * `MAX_KEPT_PER_DROP`, and can be found without
 * reading the whole partition, since they are copied while `finished_jobs`
 * is locked. `gone` (a condition on its rows) leaves out rows an earlier
 * pass of a preview would have deleted, so the preview decides on what
 * that pass would have left. When the pass deletes succeeded jobs, what
 * stays is dead or cancelled, found through the partition's copy of
 * `finished_jobs_dead_idx`;
 * otherwise the partition itself must hold at most that many rows. Counts
 * stop one past the limit, so a survey costs at most that many rows read.
 *
 * ### SQL
 * ```sql
 * -- states include 'succeeded'
 * SELECT count(*) AS n FROM (SELECT 1 FROM "stint"."finished_jobs_20250301"
 *   WHERE state IN ('dead', 'cancelled') AND state <> ALL($1::text[]) LIMIT 2001) AS counted;
 * -- otherwise: the partition's rows, then the rows to keep, each counted the same way
 * ```
 *
 * @example
 * ```ts
 * const { drop, kept } = await surveyPartition(db, "stint", { name: "finished_jobs_20250301", day: "2025-03-01" }, { states: ["succeeded", "cancelled"] });
 * ```
 */
export async function surveyPartition(
  executor: Kysely<any>,
  schema: string,
  partition: HistoryPartition,
  pass: Pick<RetentionPass, "states" | "exceptQueues">,
  gone?: RawBuilder<unknown>,
): Promise<PartitionSurvey> {
  const { states } = pass;
  const table = sql.id(schema, partition.name);
  const countUpTo = (on: Kysely<any>, of: RawBuilder<unknown>, where: RawBuilder<unknown>) =>
    countRowsUpTo(on, of, gone === undefined ? where : sql`(${where}) AND NOT coalesce(${gone}, false)`);
  const others = sql`state <> ALL(${[...states]}::text[])`;
  const spared = pass.exceptQueues ?? [];
  // Rows of the spared queues in the pass's states stay too: through the partition's copy of finished_jobs_queue_idx.
  const sparedRows =
    spared.length === 0 ? 0 : await countUpTo(executor, table, sql`queue = ANY(${[...spared]}::text[]) AND state = ANY(${[...states]}::text[])`);
  if (sparedRows > MAX_KEPT_PER_DROP) return Object.freeze({ drop: false, kept: sparedRows });
  if (states.includes("succeeded")) {
    const kept = sparedRows + (await countUpTo(executor, table, sql`state IN ('dead', 'cancelled') AND ${others}`));
    return Object.freeze({ drop: kept <= MAX_KEPT_PER_DROP, kept });
  }
  const rows = await countUpTo(executor, table, sql`true`);
  if (rows > MAX_KEPT_PER_DROP) return Object.freeze({ drop: false, kept: rows });
  return Object.freeze({ drop: true, kept: sparedRows + (await countUpTo(executor, table, others)) });
}

/** Rows of `table` matching `where`, counted up to one past `MAX_KEPT_PER_DROP`. */
async function countRowsUpTo(executor: Kysely<any>, table: RawBuilder<unknown>, where: RawBuilder<unknown>): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n
  FROM (SELECT 1 FROM ${table} WHERE ${where} LIMIT ${MAX_KEPT_PER_DROP + 1}::integer) AS counted`.execute(executor);
  return Number(rows[0]?.n ?? 0);
}
