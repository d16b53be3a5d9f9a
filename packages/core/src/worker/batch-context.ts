import type { ClaimedJob } from "../job/job-record";
import type { Logger } from "../logging/logger";
import type { JobContext } from "./job-context";

/**
 * One job of a batch: its parsed item, the claimed job and the job's own
 * `JobContext` (its signal aborts when this job is cancelled or loses its
 * lease; `ctx.transaction`, `ctx.once`, `ctx.progress` and `ctx.log` work
 * for this job alone).
 *
 * @example
 * ```ts
 * for (const entry of entries) entry.ctx.log(`Sent with ${entry.item.to.length} recipients`);
 * ```
 */
export interface BatchEntry<T> {
  readonly item: T;
  readonly job: ClaimedJob;
  readonly ctx: JobContext;
}

/**
 * What `processBatch` gets besides its entries. A job settles the moment
 * `succeed` or `fail` names it: its outcome is written at once, while the
 * rest of the batch runs. When `processBatch` resolves, every job not
 * settled yet succeeds; when it throws, every job not settled yet fails
 * with that error (each through `handleFailure`, by its own attempt count).
 *
 * @example
 * ```ts
 * const answers = await this.mailer.sendMany(entries.map((entry) => entry.item), { signal: ctx.signal });
 * entries.forEach((entry, index) => {
 *   const answer = answers[index]!;
 *   if (answer.ok) ctx.succeed(entry, { messageId: answer.id });
 *   else ctx.fail(entry, answer.error);
 * });
 * ```
 */
export interface BatchContext<T> {
  /** The worker incarnation that owns the batch's attempts. */
  readonly workerId: string;
  /**
   * Fires when the whole batch must stop: the shortest timeout among its
   * jobs passed, a job's lease was lost, or the worker is shutting down.
   * `signal.reason` says which. A cancelled job stops only its own entry.
   */
  readonly signal: AbortSignal;
  /** The process's logger, with the queue, the worker id and the batch's size. */
  readonly log: Logger;
  /**
   * Settles `entry` as succeeded with `result` (stored as its `result`).
   * A job settles once: false when it was settled already (by a call, or
   * by its own signal), and nothing changes.
   */
  succeed(entry: BatchEntry<T>, result?: unknown): boolean;
  /** Settles `entry` as failed with `error`: `handleFailure` decides between a retry and dead. False when it was settled already. */
  fail(entry: BatchEntry<T>, error: unknown): boolean;
}
