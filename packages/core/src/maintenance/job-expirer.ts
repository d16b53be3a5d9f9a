import { BoundedSweep } from "./bounded-sweep";

/**
 * Cancels waiting jobs whose start-by deadline passed (`startBy`,
 * `expireInMs`), with `STINT_EXPIRED`, and forgets unique windows that
 * have closed, of its queues (all of them in the loop-mode leader's
 * sweep; a once-mode run's own queues, so a deployment of CronJobs alone
 * keeps the window table the size of the open windows too). A claim
 * never starts such a job whether or not this has run; it moves them to
 * the history, where waiters, listings and the dashboard see them as
 * cancelled, and out of the claim's way.
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
    const cancelled = await this.store.cancelExpiredJobs(this.scope());
    const forgotten = await this.store.deleteClosedWindows(this.scope());
    return `cancelled ${cancelled} expired jobs, forgot ${forgotten} closed unique windows`;
  }
}
