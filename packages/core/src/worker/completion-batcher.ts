import { coerceError } from "../errors/coerce-error";
import type { Logger } from "../logging/logger";
import type { CompletedJob, JobStore } from "../store/job-store";
import type { Clock } from "../time/clock";

interface Pending {
  readonly job: CompletedJob;
  readonly settle: (applied: boolean) => void;
}

const MAX_BATCH = 1_000;
const WRITE_TRIES = 4;

/**
 * Group commit for successes: completions that arrive while a write is in
 * flight are written together in the next statement, so a busy worker
 * records hundreds of successes per round trip and an idle one records a
 * single success at once.
 */
export class CompletionBatcher {
  readonly #store: JobStore;
  readonly #workerId: string;
  readonly #clock: Clock;
  readonly #log: Logger;
  #pending: Pending[] = [];
  #flushing: Promise<void> | undefined;

  constructor(store: JobStore, workerId: string, clock: Clock, log: Logger) {
    this.#store = store;
    this.#workerId = workerId;
    this.#clock = clock;
    this.#log = log;
  }

  /** Records a success; resolves to whether the fenced write applied. */
  complete(job: CompletedJob): Promise<boolean> {
    return new Promise((settle) => {
      this.#pending.push({ job, settle });
      this.#flushing ??= this.#flushAll();
    });
  }

  /** Waits until every completion handed in so far is written. */
  async drain(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  async #flushAll(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, MAX_BATCH);
      await this.#write(batch);
    }
    this.#flushing = undefined;
  }

  async #write(batch: readonly Pending[]): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        const applied = new Set(await this.#store.completeJobs({ workerId: this.#workerId, jobs: batch.map((p) => p.job) }));
        for (const pending of batch) pending.settle(applied.has(pending.job.id));
        return;
      } catch (thrown) {
        const error = coerceError(thrown);
        if (attempt >= WRITE_TRIES) {
          this.#log.error(`Could not record ${batch.length} completions: ${error.message}; their leases will expire and the jobs run again`, {
            workerId: this.#workerId,
          });
          for (const pending of batch) pending.settle(false);
          return;
        }
        await this.#clock.sleep(100 * 4 ** (attempt - 1));
      }
    }
  }
}
