const DAY_MS = 86_400_000;
/** After a failed try (a lock it waited for too long, a lost connection), the next claim tries again this much later. */
const RETRY_AFTER_MS = 60_000;

/**
 * Keeps the history's day partitions ahead of the calendar from any
 * process that claims jobs, so that a deployment without a loop-mode
 * leader (a CronJob that runs `once`) still finishes every job into its
 * day's partition. The first claim of each UTC day starts one
 * `ensure_history_partitions(today, today + 7)` on the side, never waited
 * for; on the common day every partition is there and the function
 * returns after looking. A failure is tried again a minute later; a look
 * that found the history too busy to wait for (`ensureHistoryPartitions`
 * returns 0) leaves the day to the next day's look, with partitions still
 * a week ahead. Jobs of a day without a partition land in
 * `finished_jobs_kept`, still found by every reader.
 *
 * @example
 * ```ts
 * const upkeep = new HistoryUpkeep(() => ensureHistoryPartitions(db, "stint"));
 * upkeep.onClaim(); // at most one statement per day, in the background
 * ```
 */
export class HistoryUpkeep {
  readonly #ensure: () => Promise<number>;
  readonly #now: () => number;
  /** Until when (epoch ms) claims start nothing: the end of the day checked, or the retry time after a failure. */
  #quietUntil = 0;

  /** `ensure` makes the partitions from today to a week ahead (see `ensureHistoryPartitions`). */
  constructor(ensure: () => Promise<number>, now: () => number = Date.now) {
    this.#ensure = ensure;
    this.#now = now;
  }

  /** Called on every claim: starts the day's check when one is due. */
  onClaim(): void {
    const now = this.#now();
    if (now < this.#quietUntil) return;
    this.#quietUntil = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
    void this.#ensure().catch(() => {
      this.#quietUntil = this.#now() + RETRY_AFTER_MS;
    });
  }
}
