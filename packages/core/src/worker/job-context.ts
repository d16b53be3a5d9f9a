import type { EnqueueOptions } from "../job/enqueue-options";
import type { JobDefinition } from "../job/job-definition";
import type { ClaimedJob } from "../job/job-record";
import type { Logger } from "../logging/logger";
import type { EnqueueResult } from "../store/job-store";

/**
 * What a handler gets besides its parsed item.
 *
 * @example
 * ```ts
 * protected async processItem(item: Report, ctx: JobContext) {
 *   const rows = await fetchRows(item, { signal: ctx.signal });
 *   ctx.log.info(`Fetched ${rows.length} rows`);
 *   await ctx.enqueue(EmailReport, { reportId: item.id }); // chain the next job
 * }
 * ```
 */
export interface JobContext {
  /** The claimed job: id, queue, attempt, maxAttempts, raw payload, … */
  readonly job: ClaimedJob;
  /** The worker incarnation that owns this attempt. */
  readonly workerId: string;
  /**
   * Fires when the attempt must stop: its timeout passed, its lease was
   * lost, or the worker is shutting down. `signal.reason` says which.
   * Pass it to fetch, database drivers and timers.
   */
  readonly signal: AbortSignal;
  /** A logger whose lines carry jobId, queue, attempt and workerId. */
  readonly log: Logger;
  /** Enqueues another job (chaining). */
  enqueue<U>(definition: JobDefinition<U>, payload: U, options?: EnqueueOptions): Promise<EnqueueResult>;
}

/**
 * What `handleFailure` decides: another attempt after `delayMs`, or give up.
 *
 * @example
 * ```ts
 * return { action: "retry", delayMs: 5_000 };
 * ```
 */
export type FailureDecision = { readonly action: "retry"; readonly delayMs: number } | { readonly action: "dead" };
