import type { JobStore, QueueCounts } from "@stint/core";

/** Queue counts with the jobs that succeeded within the asked window, when the store can count them. */
export interface QueueCountsWithCompleted extends QueueCounts {
  /** Jobs that succeeded within the window; `null` when the store cannot say. */
  readonly completedRecently: number | null;
}

/**
 * `countByQueue`, asking also for the jobs that succeeded in the last
 * `completedSinceMs` (on the database clock). A store that cannot count
 * them leaves `completedSince` out; then `completedRecently` is `null` and
 * the CLI shows `n/a`.
 */
export async function countQueues(
  store: JobStore,
  params: { readonly queues?: readonly string[]; readonly completedSinceMs: number },
): Promise<readonly QueueCountsWithCompleted[]> {
  const rows = await store.countByQueue({
    ...(params.queues === undefined ? {} : { queues: params.queues }),
    completedSinceMs: params.completedSinceMs,
  });
  return rows.map((row) => ({ ...row, completedRecently: row.completedSince ?? null }));
}
