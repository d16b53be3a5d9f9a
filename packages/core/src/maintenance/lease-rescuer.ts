import type { JobStore } from "../store/job-store";
import type { MaintenanceService } from "./maintenance-service";

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
export class LeaseRescuer implements MaintenanceService {
  readonly name = "lease-rescue";
  readonly everyMs: number;
  readonly #store: JobStore;
  readonly #queues: readonly string[] | undefined;
  readonly #batchSize: number;

  constructor(store: JobStore, options: { readonly queues?: readonly string[]; readonly batchSize?: number; readonly everyMs?: number } = {}) {
    this.#store = store;
    this.#queues = options.queues;
    this.#batchSize = options.batchSize ?? 1_000;
    this.everyMs = options.everyMs ?? 15_000;
  }

  /** One bounded pass (at most `batchSize` jobs). */
  async runOnce(): Promise<string> {
    const { retried, dead } = await this.#store.rescueExpiredLeases({
      limit: this.#batchSize,
      ...(this.#queues === undefined ? {} : { queues: this.#queues }),
    });
    return `rescued ${retried + dead} expired leases (${retried} retried, ${dead} dead)`;
  }
}
