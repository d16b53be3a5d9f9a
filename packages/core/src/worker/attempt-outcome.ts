/**
 * How one attempt ended, as the hooks decided it, before anything is
 * written. The executor produces exactly one per attempt; the recorder
 * writes it.
 */
export type AttemptOutcome =
  /** `processItem` resolved to `result`; `resultJson` is it as JSON text (or null). `inTransaction`: `ctx.transaction` already wrote it. */
  | { readonly kind: "succeeded"; readonly result: unknown; readonly resultJson: string | null; readonly inTransaction: boolean; readonly durationMs: number }
  /** The attempt failed and another one runs after `delayMs`. */
  | { readonly kind: "retry"; readonly delayMs: number; readonly error: unknown; readonly durationMs: number }
  /** The handler asked to run again after `delayMs` without spending the attempt. */
  | { readonly kind: "snoozed"; readonly delayMs: number; readonly durationMs: number }
  /** No further attempt: a parse failure, a permanent error, the last attempt failed, or `handleFailure` said so. */
  | { readonly kind: "dead"; readonly error: unknown; readonly durationMs: number }
  /**
   * The lease ran out (or the store named another owner) before the outcome
   * could be written. `started`: whether the handler had begun.
   */
  | { readonly kind: "lease-lost"; readonly error: Error; readonly started: boolean; readonly durationMs: number }
  /**
   * An operator cancelled the job while this worker held the attempt, and
   * the attempt's signal aborted with `error` (a `CancelledError`) before
   * its outcome was decided. The cancel wrote the job's state: the attempt
   * writes nothing. `started`: whether the handler had begun.
   */
  | { readonly kind: "cancelled"; readonly error: Error; readonly started: boolean; readonly durationMs: number }
  /**
   * The worker is stopping: the job goes back to the queue without spending
   * the attempt. `started`: whether the handler had begun (then its history
   * records a `shutdown` attempt).
   */
  | { readonly kind: "released"; readonly started: boolean; readonly durationMs: number };

/** What writing an outcome came to. */
export type WriteResult =
  /** The fenced write matched the attempt: the outcome is recorded. */
  | "applied"
  /** The fenced write matched nothing: another worker owns the job (or the lease rescue took it back). */
  | "fence-missed"
  /**
   * Nothing was written because an operator cancelled the attempt: its
   * outcome was `cancelled`, or its fenced write found the job cancelled in
   * this attempt. The cancel itself recorded the job's state and history.
   */
  | "cancelled"
  /** The store kept failing: nothing was recorded; the job runs again once its lease lapses. */
  | "failed";

/** The outcome of an attempt whose handler succeeded. */
export type SucceededOutcome = Extract<AttemptOutcome, { readonly kind: "succeeded" }>;
