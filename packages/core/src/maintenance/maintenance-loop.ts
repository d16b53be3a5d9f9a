import { coerceError } from "../errors/coerce-error";
import type { Logger } from "../logging/logger";
import type { LeaderLock } from "../runtime/coordination";
import type { Clock } from "../time/clock";
import type { MaintenanceService } from "./maintenance-service";

/** Options of {@link MaintenanceLoop}. */
export interface MaintenanceLoopOptions {
  readonly leader: LeaderLock;
  readonly services: readonly MaintenanceService[];
  readonly log: Logger;
  readonly clock: Clock;
  /** How often a process that is not the leader tries to become it, in ms. Default 5,000. */
  readonly electionIntervalMs?: number;
  /** Granularity of the loop, in ms. Default 500. */
  readonly tickMs?: number;
}

/**
 * Runs maintenance services in the one process that holds the leader lock.
 * Followers try to take the lock every `electionIntervalMs`; a leader whose
 * lock connection dies notices on its next tick and stops. Nothing breaks
 * without a leader: the claim path takes back expired leases by itself and
 * once-mode runs do their own maintenance.
 *
 * @example
 * ```ts
 * const loop = new MaintenanceLoop({ leader, services: [rescuer, ticker, pruner], log, clock: systemClock });
 * await loop.run(signal); // until signal aborts; then releases the lock
 * ```
 */
export class MaintenanceLoop {
  readonly #options: MaintenanceLoopOptions;
  readonly #lastRun = new Map<string, number>();
  #leading = false;

  constructor(options: MaintenanceLoopOptions) {
    this.#options = options;
  }

  /** Whether this process is the maintenance leader now. */
  get leading(): boolean {
    return this.#leading;
  }

  /** Runs until `signal` aborts, then gives up the lock. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const { leader, clock, electionIntervalMs = 5_000, tickMs = 500 } = this.#options;
    let nextElection = 0;
    try {
      while (!signal.aborted) {
        if (!leader.held && clock.now() >= nextElection) {
          nextElection = clock.now() + electionIntervalMs;
          await this.#elect();
        }
        if (this.#leading && !leader.held) this.#step(false, "lost the maintenance lock");
        if (this.#leading) await this.#runDueServices(signal);
        await clock.sleep(tickMs, signal);
      }
    } finally {
      await leader.release().catch(() => undefined);
      this.#step(false, "released the maintenance lock");
    }
  }

  async #elect(): Promise<void> {
    try {
      this.#step(await this.#options.leader.tryAcquire(), "became the maintenance leader");
    } catch (thrown) {
      this.#options.log.warn(`Maintenance election failed: ${coerceError(thrown).message}`);
    }
  }

  #step(leading: boolean, message: string): void {
    if (leading === this.#leading) return;
    this.#leading = leading;
    if (!leading) this.#lastRun.clear();
    this.#options.log.info(message.charAt(0).toUpperCase() + message.slice(1));
  }

  async #runDueServices(signal: AbortSignal): Promise<void> {
    const { services, clock, log } = this.#options;
    for (const service of services) {
      if (signal.aborted || !this.#options.leader.held) return;
      const last = this.#lastRun.get(service.name);
      if (last !== undefined && clock.now() - last < service.everyMs) continue;
      this.#lastRun.set(service.name, clock.now());
      try {
        const outcome = await service.runOnce();
        log.debug(`Maintenance ${service.name}: ${outcome}`, { service: service.name });
      } catch (thrown) {
        log.warn(`Maintenance ${service.name} failed: ${coerceError(thrown).message}`, { service: service.name });
      }
    }
  }
}
