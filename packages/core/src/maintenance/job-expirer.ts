import { BoundedSweep } from "./bounded-sweep";

/**
 * Cancels waiting jobs whose start-by deadline passed (`startBy`,
 * `expireInMs`), with `STINT_EXPIRED`, and forgets unique windows that
 * have closed. A claim never starts such a job whether or not this has
 * run; it moves them to the history, where waiters, listings and the
 * dashboard see them as cancelled, and out of the claim's way.
 *
 * @example
 * ```ts
 * const expirer = new JobExpirer(store, { queues: ["send-push"] });
 * await expirer.runOnce(); // "cancelled 3 expired jobs, forgot 0 closed unique windows"
 * ```
 */
export class JobExpirer extends BoundedSweep {
  readonly name = "expiry";

  /** One bounded pass (at most `batchSize` jobs, and as many windows). */
  async runOnce(): Promise<string> {
    const { limit } = this.scope();
    const cancelled = await this.store.cancelExpiredJobs(this.scope());
    // Windows are not per queue: a sweep of some queues leaves them to a sweep of all.
    const forgotten = this.queues === undefined ? await this.store.deleteClosedWindows({ limit }) : 0;
    return `cancelled ${cancelled} expired jobs, forgot ${forgotten} closed unique windows`;
  }
}
