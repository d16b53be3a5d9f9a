import { inject, injectable } from "tsyringe";
import { JOB_STORE } from "../di/tokens";
import type { JobDefinition } from "../job/job-definition";
import type { QueueControls, QueueRetentionChange, RateLimit } from "../queue/queue-controls";
import { parseRateLimit } from "../queue/rate-limit-text";
import { checkedJobStore } from "../store/checked-job-store";
import type { JobStore } from "../store/job-store";
import type { WaitingJobState } from "../store/store-params";
import { integerOption } from "../validation/option-checks";

/** A queue, by its job kind or its name. */
export type QueueRef = Pick<JobDefinition<never>, "name"> | string;

/** What {@link QueueAdmin.limit} changes: a field left out keeps its value, `null` removes it. */
export interface QueueLimits {
  /** At most this many jobs of the queue running at once, across every worker. */
  readonly maxRunning?: number | null;
  /** At most this many jobs of one group (`group` at enqueue) running at once, across every worker. */
  readonly maxRunningPerGroup?: number | null;
  /** At most this many starts per period: `"100/min"`, `"50/s"`, or `{ limit, periodMs }`. */
  readonly rateLimit?: RateLimit | string | null;
}

/** Jobs per `cancelJobs` statement in {@link QueueAdmin.cancelWaiting}. */
export const CANCEL_BATCH_SIZE = 1_000;

/** What {@link QueueAdmin.cancelWaiting} cancels. */
export interface CancelWaitingOptions {
  /** Which waiting jobs: `queued`, `failed` (a retry is scheduled), or both. Running jobs are cancelled by id (`store.cancelJob`). */
  readonly states: readonly WaitingJobState[];
  /** At most this many; default: until none is left. */
  readonly max?: number;
  /** Stops between two batches once it aborts. */
  readonly signal?: AbortSignal;
  /** Told the running count after each batch (a progress bar). */
  readonly onBatch?: (cancelled: number) => void;
}

/** What {@link QueueAdmin.cancelWaiting} did. */
export interface CancelWaitingResult {
  readonly cancelled: number;
  /** The signal stopped it before it was done. */
  readonly interrupted: boolean;
}

/**
 * The operator's levers on queues, as code: pause and resume, a running cap
 * and a rate limit, all kept in the database so every worker process obeys
 * them (see `stint pause`, `stint resume`, `stint limit`), and a bulk
 * cancel of the jobs that wait (`stint cancel --queue`).
 *
 * @example
 * ```ts
 * const admin = container.resolve(QueueAdmin);
 * await admin.pause(SendInvoiceEmail);          // running jobs finish; no new ones start
 * await admin.limit("call-partner-api", { maxRunning: 3, rateLimit: "100/min" });
 * await admin.resume(SendInvoiceEmail);
 * ```
 */
@injectable()
export class QueueAdmin {
  readonly #store: JobStore;

  constructor(@inject(JOB_STORE) store: JobStore) {
    this.#store = checkedJobStore(store);
  }

  /** Stops every worker from starting jobs of `queue`; running jobs finish, enqueues still work. */
  pause(queue: QueueRef): Promise<QueueControls> {
    return this.#store.setQueueControls(nameOf(queue), { paused: true });
  }

  /** Lets the workers of a paused queue claim again; listening workers wake at once. */
  resume(queue: QueueRef): Promise<QueueControls> {
    return this.#store.setQueueControls(nameOf(queue), { paused: false });
  }

  /** Sets or removes the queue's running cap and rate limit. */
  limit(queue: QueueRef, limits: QueueLimits): Promise<QueueControls> {
    const { maxRunning, maxRunningPerGroup, rateLimit } = limits;
    return this.#store.setQueueControls(nameOf(queue), {
      ...(maxRunning === undefined ? {} : { maxRunning }),
      ...(maxRunningPerGroup === undefined ? {} : { maxRunningPerGroup }),
      ...(rateLimit === undefined ? {} : { rateLimit: typeof rateLimit === "string" ? parseRateLimit(rateLimit) : rateLimit }),
    });
  }

  /**
   * Sets how many days `queue` keeps its finished jobs, per state, in place
   * of the retention pruner's global setting; `null` goes back to it, a
   * field left out keeps its value. Every process's pruner reads it at its
   * next pass. A `ConfigError` names a refused field (`retention.deadDays`).
   *
   * @example
   * ```ts
   * await admin.retain(Payment, { succeededDays: 90, deadDays: 365 });
   * await admin.retain("thumbnails", { succeededDays: 0, cancelledDays: 0 }); // gone at the next pass
   * ```
   */
  retain(queue: QueueRef, retention: QueueRetentionChange): Promise<QueueControls> {
    return this.#store.setQueueControls(nameOf(queue), { retention });
  }

  /**
   * Lets a serial line that a dead job holds go on (see
   * `EnqueueOptions.serialKey`): the line's next job may start; the dead
   * job stays dead. False when the line is not held.
   *
   * @example
   * ```ts
   * await admin.releaseLine(PostLedgerEntry, "account:42");
   * ```
   */
  releaseLine(queue: QueueRef, key: string): Promise<boolean> {
    return this.#store.releaseLine({ queue: nameOf(queue), key });
  }

  /**
   * Cancels the jobs of `queue` that wait in `states`, {@link CANCEL_BATCH_SIZE}
   * per statement (`store.cancelJobs`), until `max` are cancelled, a batch
   * finds fewer than it asked for, or `signal` aborts. Jobs a worker is
   * claiming at that moment are left to it.
   *
   * @example
   * ```ts
   * const { cancelled } = await admin.cancelWaiting("send-invoice", { states: ["queued", "failed"] });
   * ```
   */
  async cancelWaiting(queue: QueueRef, options: CancelWaitingOptions): Promise<CancelWaitingResult> {
    const name = nameOf(queue);
    const max = options.max ?? Number.POSITIVE_INFINITY;
    if (max !== Number.POSITIVE_INFINITY) integerOption("max", max, 0, Number.MAX_SAFE_INTEGER);
    let cancelled = 0;
    while (cancelled < max) {
      if (options.signal?.aborted === true) return Object.freeze({ cancelled, interrupted: true });
      const limit = Math.min(CANCEL_BATCH_SIZE, max - cancelled);
      const done = await this.#store.cancelJobs({ queue: name, states: options.states, limit });
      cancelled += done;
      options.onBatch?.(cancelled);
      if (done < limit) break;
    }
    return Object.freeze({ cancelled, interrupted: false });
  }

  /** The controls of every queue that has any set. */
  controls(): Promise<readonly QueueControls[]> {
    return this.#store.listQueueControls();
  }
}

/** The queue's name; the store checks it (an `InvalidNameError` before any write). */
function nameOf(queue: QueueRef): string {
  return typeof queue === "string" ? queue : queue.name;
}
