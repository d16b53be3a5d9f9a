import type { Logger } from "../logging/logger";

/**
 * What `onDead` gets besides the job and its error.
 *
 * @example
 * ```ts
 * protected override async onDead(job: JobRecord, error: Error, ctx: DeadJobContext) {
 *   await pager.alert({ key: `dead:${job.id}:${ctx.attempt}`, text: error.message }, { signal: ctx.signal });
 * }
 * ```
 */
export interface DeadJobContext {
  /** The worker incarnation running the hook (not necessarily the one that ran the last attempt). */
  readonly workerId: string;
  /** The attempt after which the job died. A job retried since has a higher `job.attempts`. */
  readonly attempt: number;
  /** When the death committed, on the database clock. */
  readonly diedAt: Date;
  /**
   * 1 on the first call for this death; 2 or more when an earlier call's
   * process died (or lost its database) before the hook could be recorded
   * as done. Use `job.id` and `attempt` as an idempotency key for effects
   * that must not repeat.
   */
  readonly delivery: number;
  /** Aborts when the hook's time (`onDeadTimeoutMs`) is up; pass it to what the hook waits on. */
  readonly signal: AbortSignal;
  /** A logger whose lines carry jobId, queue, attempt and workerId (the kind's secret fields redacted). */
  readonly log: Logger;
}
