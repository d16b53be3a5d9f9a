/**
 * How one attempt of a job ended, as its history records it:
 *
 * - `succeeded` — the handler's result was stored (read from the job row);
 * - `failed` — it failed and another attempt was scheduled;
 * - `dead` — it failed and the job gave up;
 * - `lease-lost` — its worker stopped being heard from (died, hung, lost its
 *   connection) and the lease ran out; written by whoever took the job over;
 * - `cancelled` — an operator cancelled the job while it ran;
 * - `shutdown` — its worker was stopping and gave the started job back;
 * - `snoozed` — the handler asked to run again later (`snooze`), without
 *   spending the attempt.
 */
export type AttemptOutcomeName = "succeeded" | "failed" | "dead" | "lease-lost" | "cancelled" | "shutdown" | "snoozed";

/** The error of a failed attempt, as its history record keeps it. */
export interface AttemptError {
  /** `Name: message` of the error itself, at most `MAX_ERROR_MESSAGE` (1,000) characters. */
  readonly message: string | null;
  /** A stable code such as `STINT_TIMEOUT`, or `null`. */
  readonly code: string | null;
  /** Stack and causes, at most `MAX_ERROR_TEXT` (8,192) characters (as `last_error`). */
  readonly stack: string | null;
}

/**
 * One attempt of a job, as `listAttempts` returns it: worker, times,
 * outcome and error. Attempts that did not succeed are rows of their own;
 * the one that succeeded is read from the job row (it holds the same facts).
 *
 * @example
 * ```ts
 * for (const a of await store.listAttempts({ jobId: "812" })) {
 *   console.log(a.attempt, a.outcome, a.workerId, a.durationMs, a.error?.message);
 * }
 * ```
 */
export interface AttemptRecord {
  readonly jobId: string;
  /** The attempt's number (an attempt given back without spending it, such as a snooze, shares it with the next one). */
  readonly attempt: number;
  readonly outcome: AttemptOutcomeName;
  /** The worker incarnation that ran it, or `null` when unknown. */
  readonly workerId: string | null;
  /** When it was claimed. */
  readonly startedAt: Date | null;
  /** When its outcome was written (for `lease-lost`: when the lease ran out). */
  readonly finishedAt: Date | null;
  /** How long it ran as its worker measured it, or the database clock's figure when the worker could not say. */
  readonly durationMs: number | null;
  readonly error: AttemptError | null;
}
