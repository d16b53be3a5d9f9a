import { coerceError } from "../errors/coerce-error";
import type { RunEvents } from "../events/run-events";
import type { ClaimedJob } from "../job/job-record";
import { serializeProgress } from "../job/progress-value";
import type { Logger } from "../logging/logger";
import type { JobStore } from "../store/job-store";

/**
 * Stores one attempt's `ctx.progress` values on its job without ever making
 * the handler wait: the latest value wins, at most one write is in flight,
 * and a value reported while one is in flight goes out when it returns
 * (values in between are skipped). A failed write is logged at `debug` and
 * dropped; the next value tries again. The executor calls {@link flush}
 * before it writes the attempt's outcome, so the last value is stored first.
 *
 * @example
 * ```ts
 * const progress = new ProgressReporter({ store, workerId, job, log, events });
 * progress.report({ done: 40, of: 100 }); // returns at once
 * await progress.flush();                  // before the outcome is written
 * ```
 */
export class ProgressReporter {
  readonly #store: JobStore;
  readonly #workerId: string;
  readonly #job: ClaimedJob;
  readonly #log: Logger;
  readonly #events: RunEvents;
  /** The newest value not yet sent, as JSON text. */
  #latest: string | undefined;
  #inFlight: Promise<void> | undefined;

  constructor(parts: { readonly store: JobStore; readonly workerId: string; readonly job: ClaimedJob; readonly log: Logger; readonly events: RunEvents }) {
    this.#store = parts.store;
    this.#workerId = parts.workerId;
    this.#job = parts.job;
    this.#log = parts.log;
    this.#events = parts.events;
  }

  /**
   * Takes the handler's latest progress: checks it (a `PayloadError` for a
   * value that is not JSON or is over `MAX_PROGRESS_BYTES`), emits
   * `job.progress`, and stores it in the background.
   */
  report(value: unknown): void {
    const json = serializeProgress(value);
    this.#events.jobProgress(this.#job, value);
    this.#latest = json;
    if (this.#inFlight === undefined) this.#start();
  }

  /** Resolves once every value reported so far is stored (or its write failed). Never rejects. */
  async flush(): Promise<void> {
    while (this.#inFlight !== undefined) await this.#inFlight;
  }

  #start(): void {
    this.#inFlight = this.#send().finally(() => {
      this.#inFlight = undefined;
      if (this.#latest !== undefined) this.#start();
    });
  }

  async #send(): Promise<void> {
    while (this.#latest !== undefined) {
      const progressJson = this.#latest;
      this.#latest = undefined;
      const { id, attempt } = this.#job;
      try {
        await this.#store.writeProgress({ workerId: this.#workerId, job: { id, attempt }, progressJson });
      } catch (thrown) {
        this.#log.debug(`Could not store the progress of job ${id} (${coerceError(thrown).message}); the next value tries again`, {
          jobId: id,
          attempt,
        });
      }
    }
  }
}
