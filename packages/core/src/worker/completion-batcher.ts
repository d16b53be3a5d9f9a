import { coerceError } from "../errors/coerce-error";
import type { Logger } from "../logging/logger";
import type { CompletedJob, JobStore } from "../store/job-store";
import type { WriteResult } from "./attempt-outcome";
import type { StoreRetryPolicy } from "./store-retry-policy";

interface Pending {
  readonly job: CompletedJob;
  readonly settle: (written: WriteResult) => void;
}

const MAX_BATCH = 1_000;

/**
 * Group commit for successes: completions that arrive while a write is in
 * flight are written together in the next statement, so a busy worker
 * records hundreds of successes per round trip and an idle one records a
 * single success at once.
 */
export class CompletionBatcher {
  readonly #store: JobStore;
  readonly #workerId: string;
  readonly #policy: StoreRetryPolicy;
  readonly #giveUpAfterMs: number;
  readonly #log: Logger;
  #pending: Pending[] = [];
  #flushing: Promise<void> | undefined;

  constructor(parts: { readonly store: JobStore; readonly workerId: string; readonly policy: StoreRetryPolicy; readonly giveUpAfterMs: number; readonly log: Logger }) {
    this.#store = parts.store;
    this.#workerId = parts.workerId;
    this.#policy = parts.policy;
    this.#giveUpAfterMs = parts.giveUpAfterMs;
    this.#log = parts.log;
  }

  /** Records a success; resolves to whether the fenced write applied. */
  complete(job: CompletedJob): Promise<WriteResult> {
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
    try {
      const jobs = batch.map((pending) => pending.job);
      const applied = new Set(await this.#policy.run(() => this.#store.completeJobs({ workerId: this.#workerId, jobs }), { giveUpAfterMs: this.#giveUpAfterMs }));
      for (const pending of batch) pending.settle(applied.has(pending.job.id) ? "applied" : "fence-missed");
    } catch (thrown) {
      this.#log.error(`Could not record ${batch.length} completions: ${coerceError(thrown).message}`, { workerId: this.#workerId });
      for (const pending of batch) pending.settle("failed");
    }
  }
}
