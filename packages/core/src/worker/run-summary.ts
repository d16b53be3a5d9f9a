/** Why a run stopped. */
export type StopReason = "drained" | "max-jobs" | "max-runtime" | "signal" | "infrastructure";

/** How many attempts of a run (or of several runs, added up) ended each way. */
export interface RunTotals {
  readonly claimed: number;
  readonly succeeded: number;
  /** Failed attempts with a retry scheduled. */
  readonly retried: number;
  /** Attempts that asked to run later without spending an attempt. */
  readonly snoozed: number;
  readonly dead: number;
  /** Attempts whose lease ran out or was taken over before their outcome was recorded. */
  readonly leaseLost: number;
  /** Attempts an operator cancelled while this worker held them: their handlers were told to stop, and nothing of theirs was written. */
  readonly cancelled: number;
  /** Attempts whose outcome could not be written (the store kept failing); the job runs again once its lease lapses. */
  readonly writeFailed: number;
  /** Jobs given back to the queue at shutdown. */
  readonly released: number;
}

/**
 * What one `start()` did, frozen. `leaseLost` counts attempts stopped or
 * discarded because the worker no longer owned the job, `cancelled` those
 * an operator cancelled while they ran; `writeFailed` counts attempts whose
 * outcome the store could not be made to record.
 *
 * @example
 * ```ts
 * const summary = await worker.start();
 * console.log(`${summary.succeeded}/${summary.claimed} succeeded in ${summary.durationMs} ms`);
 * ```
 */
export interface RunSummary extends RunTotals {
  readonly queue: string;
  readonly workerId: string;
  readonly durationMs: number;
  readonly stoppedBecause: StopReason;
  /** The infrastructure error that ended the run, when `stoppedBecause` is `infrastructure`. */
  readonly error?: string;
}

/** The mutable counters a run keeps before they are frozen into a {@link RunSummary}. */
export type RunCounters = { -readonly [K in keyof RunTotals]: RunTotals[K] };

/** Fresh zeroed counters. */
export function newRunCounters(): RunCounters {
  return { claimed: 0, succeeded: 0, retried: 0, snoozed: 0, dead: 0, leaseLost: 0, cancelled: 0, writeFailed: 0, released: 0 };
}
