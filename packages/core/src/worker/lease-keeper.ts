import { coerceError } from "../errors/coerce-error";
import { LeaseLostError } from "../errors/job-errors";
import type { Logger } from "../logging/logger";
import type { JobAttempt, JobStore } from "../store/job-store";
import type { ResolvedWorkerOptions } from "./worker-options";

interface HeldLease extends JobAttempt {
  readonly controller: AbortController;
  /** Local time at or before which the database last set the lease. */
  renewedAt: number;
}

/**
 * Keeps the leases of a worker's in-flight jobs alive: every
 * `heartbeatIntervalMs` it extends all of them in one fenced statement.
 * A job the store no longer lets it extend, or whose lease would run out
 * while heartbeats fail, is aborted with `LeaseLostError`.
 */
export class LeaseKeeper {
  readonly #store: JobStore;
  readonly #options: ResolvedWorkerOptions;
  readonly #workerId: string;
  readonly #log: Logger;
  readonly #held = new Map<string, HeldLease>();
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(store: JobStore, options: ResolvedWorkerOptions, workerId: string, log: Logger) {
    this.#store = store;
    this.#options = options;
    this.#workerId = workerId;
    this.#log = log;
  }

  /** Starts the heartbeat loop. */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops the loop and waits for a heartbeat in progress. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  /** Starts keeping `job`'s lease; `claimedAt` is local time taken before the claim was sent. */
  hold(job: JobAttempt, controller: AbortController, claimedAt: number): void {
    this.#held.set(job.id, { id: job.id, attempt: job.attempt, controller, renewedAt: claimedAt });
  }

  /** Stops keeping `jobId`'s lease (the attempt finished). */
  release(jobId: string): void {
    this.#held.delete(jobId);
  }

  async #run(): Promise<void> {
    const { clock, heartbeatIntervalMs } = this.#options;
    while (!this.#stop.signal.aborted) {
      await clock.sleep(heartbeatIntervalMs, this.#stop.signal);
      if (this.#stop.signal.aborted) return;
      if (this.#held.size > 0) await this.#beat();
    }
  }

  async #beat(): Promise<void> {
    const { clock, leaseMs } = this.#options;
    const batch = [...this.#held.values()];
    const sentAt = clock.now();
    try {
      const extended = new Set(
        await this.#store.extendLeases({
          workerId: this.#workerId,
          leaseMs,
          jobs: batch.map(({ id, attempt }) => ({ id, attempt })),
        }),
      );
      for (const lease of batch) {
        if (extended.has(lease.id)) {
          lease.renewedAt = sentAt;
        } else if (this.#held.get(lease.id) === lease) {
          this.#lose(lease, "the store no longer lists this worker as the job's owner");
        }
      }
    } catch (thrown) {
      const error = coerceError(thrown);
      this.#log.warn(`Heartbeat failed for ${batch.length} jobs: ${error.message}`, { workerId: this.#workerId });
      const deadline = clock.now() - leaseMs * 0.9;
      for (const lease of batch) {
        if (lease.renewedAt < deadline && this.#held.get(lease.id) === lease) {
          this.#lose(lease, "heartbeats failed until the lease was about to run out");
        }
      }
    }
  }

  #lose(lease: HeldLease, why: string): void {
    this.#held.delete(lease.id);
    lease.controller.abort(new LeaseLostError(`lost the lease on job ${lease.id}: ${why}`));
  }
}
