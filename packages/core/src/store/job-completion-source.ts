/**
 * Tells waiters (`client.waitFor`) when a job may have finished, so they
 * read it again at once instead of at their next poll (PostgreSQL: one
 * shared LISTEN connection and a NOTIFY in the statement that finishes a
 * watched job). A hint only: a lost hint costs latency, never a result,
 * because waiters poll as well.
 *
 * @example
 * ```ts
 * const watch = await completions.watch("812", () => wakeUp.wake());
 * const job = await store.getJob({ id: "812" }); // read after the watch is in place
 * // … at the end:
 * await watch.close();
 * ```
 */
export interface JobCompletionSource {
  /**
   * Watches one job: `onHint()` is called whenever it may have finished
   * (a notification naming it, one too large to name jobs, or a
   * reconnection after which some may have been missed). Resolves once
   * the watch is in place, so that a job that finishes after that is
   * announced: a read of the job made after it resolves sees any finish
   * that was not announced. When the database cannot be reached it
   * resolves anyway and keeps trying (the caller's polls cover the gap);
   * it rejects only for failures retrying will not fix.
   */
  watch(jobId: string, onHint: () => void): Promise<JobWatch>;
}

/** One watch of {@link JobCompletionSource.watch}: close it when done waiting. */
export interface JobWatch {
  /** Stops the hints. Idempotent. */
  close(): Promise<void>;
}
