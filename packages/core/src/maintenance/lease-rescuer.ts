import { BoundedSweep } from "./bounded-sweep";

/**
 * Rescues running jobs whose lease expired (their worker died or stalled):
 * those with attempts left become due again, the others go to `dead` with
 * `STINT_WORKER_DIED`. The claim path takes expired jobs back by itself;
 * this also settles jobs of queues no worker is claiming right now.
 *
 * @example
 * ```ts
 * const rescuer = new LeaseRescuer(store, { queues: ["send-invoice"] });
 * await rescuer.runOnce(); // "rescued 2 expired leases (1 retried, 1 dead)"
 * ```
 */
export class LeaseRescuer extends BoundedSweep {
  readonly name = "lease-rescue";

  /** One bounded pass (at most `batchSize` jobs). */
  async runOnce(): Promise<string> {
    const { retried, dead } = await this.store.rescueExpiredLeases(this.scope());
    return `rescued ${retried + dead} expired leases (${retried} retried, ${dead} dead)`;
  }
}
