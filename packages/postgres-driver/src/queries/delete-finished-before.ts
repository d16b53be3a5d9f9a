import type { DeleteFinishedBeforeParams } from "@stint/core/driver";
import type { Kysely } from "kysely";
import { deleteFinishedRows } from "./delete-finished-rows";
import { dropHistoryPartition, dropLeftoverDays } from "./drop-history-partition";
import { isHistoryHeld } from "./history-lock";
import { KEPT_PARTITION, listExpiredPartitions, type HistoryPartition } from "./history-partitions";
import { deletesWithinDays, dropsPartitions } from "./retention-plan";
import { surveyPartition } from "./survey-partition";
import { deleteFinishedWorkflows } from "./delete-finished-workflows";

/**
 * Deletes finished jobs in `states` whose `finished_at` is older than
 * `now() - olderThanMs`, and returns how many it deleted: at most `limit`
 * row by row, more when it drops a whole day partition. Call it again until
 * it returns less than `limit`.
 *
 * In this order, while fewer than `limit` went:
 *
 * 1. the day partitions of `finished_jobs` whose whole day is past the
 *    cutoff (not for a pass limited to `queues`), oldest first — after
 *    dropping any day a stopped process left detached: each is
 *    dropped whole when what it must keep is few (`surveyPartition`,
 *    `dropHistoryPartition`; the jobs of `exceptQueues` are kept as the
 *    other states' are), its jobs in `states` deleted row by row
 *    otherwise. When the drop's lock does not come within
 *    `HISTORY_LOCK_TIMEOUT_MS`, the call returns at once, with less than
 *    `limit`: the pass ends and the next one tries again. When a
 *    transaction has held `finished_jobs` longer than that already
 *    (`isHistoryHeld`), this step is left out without waiting;
 * 2. `finished_jobs_kept` row by row — or all of `finished_jobs`, for a
 *    retention shorter than a day or a pass limited to `queues`
 *    (`deletesWithinDays`); with a day or more, a job in a day partition
 *    stays until its whole day is past the cutoff;
 * 3. the finished rows still in `jobs` (written before migration 15, not
 *    moved yet) row by row.
 *
 * Each row-by-row step is one bounded statement (`deleteFinishedRows`),
 * skipping rows others hold; every step deletes the attempt history of the
 * jobs it deletes. Last, workflows older than the cutoff that have no step
 * left go too (`deleteFinishedWorkflows`).
 *
 * @example
 * ```ts
 * const week = 7 * 86_400_000;
 * while ((await deleteFinishedBefore(db, "stint", { states: ["succeeded", "cancelled"], olderThanMs: week, limit: 1_000 })) >= 1_000);
 * ```
 */
export async function deleteFinishedBefore(db: Kysely<any>, schema: string, params: DeleteFinishedBeforeParams): Promise<number> {
  if (params.states.length === 0 || params.queues?.length === 0) return 0;
  let deleted = 0;
  if (dropsPartitions(params)) await dropLeftoverDays(db, schema);
  if (dropsPartitions(params) && !(await isHistoryHeld(db, schema))) {
    for (const partition of await listExpiredPartitions(db, schema, params.olderThanMs)) {
      if (deleted >= params.limit) return deleted;
      const gone = await retirePartition(db, schema, partition, params, params.limit - deleted);
      if (gone === "busy") return deleted;
      deleted += gone;
    }
  }
  for (const table of [deletesWithinDays(params) ? "finished_jobs" : KEPT_PARTITION, "jobs"]) {
    if (deleted >= params.limit) break;
    deleted += await deleteFinishedRows(db, schema, table, { ...params, limit: params.limit - deleted });
  }
  await deleteFinishedWorkflows(db, schema, params.olderThanMs);
  return deleted;
}

/** One partition wholly past the cutoff: dropped whole, or at most `room` of its jobs in `states` deleted row by row. */
async function retirePartition(
  db: Kysely<any>,
  schema: string,
  partition: HistoryPartition,
  params: DeleteFinishedBeforeParams,
  room: number,
): Promise<number | "busy"> {
  const { drop } = await surveyPartition(db, schema, partition, params);
  if (drop) return dropHistoryPartition(db, schema, partition, params, params.limit);
  return deleteFinishedRows(db, schema, partition.name, { ...params, limit: room });
}
