import { inject, injectable } from "tsyringe";
import { JOB_STORE } from "../di/tokens";
import type { JobDefinition } from "../job/job-definition";
import type { QueueControls, RateLimit } from "../queue/queue-controls";
import { parseRateLimit } from "../queue/rate-limit-text";
import { checkedJobStore } from "../store/checked-job-store";
import type { JobStore } from "../store/job-store";

/** A queue, by its job kind or its name. */
export type QueueRef = Pick<JobDefinition<never>, "name"> | string;

/** What {@link QueueAdmin.limit} changes: a field left out keeps its value, `null` removes it. */
export interface QueueLimits {
  /** At most this many jobs of the queue running at once, across every worker. */
  readonly maxRunning?: number | null;
  /** At most this many starts per period: `"100/min"`, `"50/s"`, or `{ limit, periodMs }`. */
  readonly rateLimit?: RateLimit | string | null;
}

/**
 * The operator's levers on queues, as code: pause and resume, a running cap
 * and a rate limit, all kept in the database so every worker process obeys
 * them (see `stint pause`, `stint resume`, `stint limit`).
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
    const { maxRunning, rateLimit } = limits;
    return this.#store.setQueueControls(nameOf(queue), {
      ...(maxRunning === undefined ? {} : { maxRunning }),
      ...(rateLimit === undefined ? {} : { rateLimit: typeof rateLimit === "string" ? parseRateLimit(rateLimit) : rateLimit }),
    });
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
