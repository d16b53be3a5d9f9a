import type {
  CancelExpiredJobsParams,
  DeleteClosedWindowsParams,
  DeleteEffectsBeforeParams,
  DeleteFinishedBeforeParams,
  RescueExpiredLeasesParams,
  RescueResult,
} from "./store-params";

/**
 * The calls of the maintenance loop, `stint prune` and readiness probes:
 * rescuing jobs whose worker died, deleting old history and effects, and
 * checking that the database answers.
 *
 * @example
 * ```ts
 * async function pruneDay(store: MaintenanceStore): Promise<number> {
 *   return store.deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 86_400_000, limit: 1_000 });
 * }
 * ```
 */
export interface MaintenanceStore {
  /**
   * Handles running jobs whose lease expired without waiting for a claim:
   * those with attempts left go back to `failed` (due now), the others to
   * `dead` with `STINT_WORKER_DIED` (and a pending `onDead` hook each, as
   * `markJobsDead`). One conditional update, at most `limit` rows.
   */
  rescueExpiredLeases(params: RescueExpiredLeasesParams): Promise<RescueResult>;

  /**
   * Cancels waiting (`queued`, `failed`) jobs whose `startBy` has passed,
   * with `error_code` `STINT_EXPIRED`, as `cancelJobs` would (their waiters
   * told), oldest deadline first, skipping rows another statement holds; at
   * most `limit`. A claim never starts such a job, so this only settles
   * them; returns how many it cancelled.
   */
  cancelExpiredJobs(params: CancelExpiredJobsParams): Promise<number>;

  /**
   * Forgets up to `limit` unique windows that have closed (of `queues`,
   * when given); returns how many. An enqueue never returns a closed
   * window's job, whether or not this has run: it keeps the store the size
   * of the open windows.
   */
  deleteClosedWindows(params: DeleteClosedWindowsParams): Promise<number>;

  /**
   * Deletes finished jobs in `states` whose `finished_at` is older than
   * `olderThanMs`, oldest first, skipping rows locked by others, with their
   * attempt history; never a job in another state, nor one that is active
   * again. Returns how many jobs it deleted; call again until it returns
   * less than `limit`.
   *
   * At most `limit` jobs go one by one per call. A store that keeps its
   * history in partitions may delete more at once, when it drops a whole
   * partition whose jobs are all past the cutoff, and may keep a job past
   * the cutoff until its whole partition is — the PostgreSQL store, for a
   * retention of a day or more and no `queues`, keeps a job until its UTC
   * day is past the cutoff, at most a day longer. With `queues`, the
   * deletion is exact, row by row. With `exceptQueues`, the jobs of those
   * queues are kept (a partition dropped whole keeps them, as it keeps the
   * jobs of other states).
   */
  deleteFinishedBefore(params: DeleteFinishedBeforeParams): Promise<number>;

  /**
   * Deletes at most `limit` rows of the effects ledger (see `runEffectOnce`)
   * recorded more than `olderThanMs` ago, oldest first, skipping rows locked
   * by others. Returns how many; a deleted key can run its effect again.
   */
  deleteEffectsBefore(params: DeleteEffectsBeforeParams): Promise<number>;

  /** Resolves when the store can reach its database (readiness probes). */
  ping(): Promise<void>;
}
