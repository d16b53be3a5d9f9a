import type { JobStore } from "../store/job-store";
import type { MaintenanceService } from "./maintenance-service";

/** Options of a {@link BoundedSweep}. */
export interface BoundedSweepOptions {
  /** Only these queues; all queues when left out. */
  readonly queues?: readonly string[];
  /** At most this many rows per pass. Default 1,000. */
  readonly batchSize?: number;
  /** How often the maintenance loop runs it, in ms. Default 15,000. */
  readonly everyMs?: number;
}

/**
 * A maintenance service that makes one bounded pass over the store's jobs
 * (of some queues, or all) every so often: the shape of the lease rescue
 * and the expiry sweep. A subclass names itself and says what one pass
 * does with {@link BoundedSweep.scope}.
 *
 * @example
 * ```ts
 * class Sweep extends BoundedSweep {
 *   readonly name = "sweep";
 *   async runOnce() { return `${await this.store.cancelExpiredJobs(this.scope())} done`; }
 * }
 * ```
 */
export abstract class BoundedSweep implements MaintenanceService {
  abstract readonly name: string;
  readonly everyMs: number;
  protected readonly store: JobStore;
  protected readonly queues: readonly string[] | undefined;
  readonly #batchSize: number;

  constructor(store: JobStore, options: BoundedSweepOptions = {}) {
    this.store = store;
    this.queues = options.queues;
    this.#batchSize = options.batchSize ?? 1_000;
    this.everyMs = options.everyMs ?? 15_000;
  }

  /** One bounded pass; says what it did. */
  abstract runOnce(): Promise<string>;

  /** The limit and queues of one pass, as the store's sweeping calls take them. */
  protected scope(): { readonly limit: number; readonly queues?: readonly string[] } {
    return { limit: this.#batchSize, ...(this.queues === undefined ? {} : { queues: this.queues }) };
  }
}
