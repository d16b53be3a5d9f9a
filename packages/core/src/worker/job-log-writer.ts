import { coerceError } from "../errors/coerce-error";
import type { ClaimedJob } from "../job/job-record";
import { keepNewestLogLines } from "../job/job-log";
import type { Logger } from "../logging/logger";
import type { JobStore } from "../store/job-store";
import type { Clock } from "../time/clock";

/**
 * How long a `ctx.log` line waits in the worker for others to join it
 * before they are written together: a handler that logs in a loop costs at
 * most about one statement a second, and one that finishes sooner has its
 * lines written once, just before its outcome.
 */
export const LOG_FLUSH_DELAY_MS = 1_000;

/**
 * Buffers one attempt's `ctx.log` lines and writes them in batches, never
 * making the handler wait: at most one write is in flight, the buffer keeps
 * the newest lines within the per-attempt limits (counting the ones it
 * drops), and the executor calls {@link flush} before the attempt's
 * outcome. A failed write is logged at `debug` and its lines dropped. An
 * attempt that never logs never makes one.
 *
 * @example
 * ```ts
 * const writer = new JobLogWriter({ store, workerId, job, log, clock });
 * writer.append('{"at":"…","message":"Uploaded"}'); // returns at once
 * await writer.flush();                              // before the outcome is written
 * ```
 */
export class JobLogWriter {
  readonly #store: JobStore;
  readonly #workerId: string;
  readonly #job: ClaimedJob;
  readonly #log: Logger;
  readonly #clock: Clock;
  #pending: readonly string[] = [];
  #pendingDropped = 0;
  #wait: AbortController | undefined;
  #inFlight: Promise<void> | undefined;

  constructor(parts: { readonly store: JobStore; readonly workerId: string; readonly job: ClaimedJob; readonly log: Logger; readonly clock: Clock }) {
    this.#store = parts.store;
    this.#workerId = parts.workerId;
    this.#job = parts.job;
    this.#log = parts.log;
    this.#clock = parts.clock;
  }

  /** Buffers one line (JSON text, see `serializeLogLine`) and makes sure a write follows within {@link LOG_FLUSH_DELAY_MS}. */
  append(lineJson: string): void {
    const { kept, dropped } = keepNewestLogLines([...this.#pending, lineJson], this.#pendingDropped);
    this.#pending = kept;
    this.#pendingDropped = dropped;
    if (this.#inFlight === undefined) this.#schedule();
  }

  /** Writes what is buffered now and resolves once every line appended so far is stored (or dropped). Never rejects. */
  async flush(): Promise<void> {
    this.#cancelWait();
    while (this.#inFlight !== undefined || this.#hasPending()) {
      if (this.#inFlight === undefined) this.#start();
      await this.#inFlight;
      this.#cancelWait();
    }
  }

  #cancelWait(): void {
    this.#wait?.abort();
    this.#wait = undefined;
  }

  #hasPending(): boolean {
    return this.#pending.length + this.#pendingDropped > 0;
  }

  /** Starts a write after {@link LOG_FLUSH_DELAY_MS}, unless one is already due. */
  #schedule(): void {
    if (this.#wait !== undefined) return;
    const wait = new AbortController();
    this.#wait = wait;
    void this.#clock.sleep(LOG_FLUSH_DELAY_MS, wait.signal).then(() => {
      if (wait.signal.aborted) return;
      this.#wait = undefined;
      if (this.#inFlight === undefined) this.#start();
    });
  }

  #start(): void {
    this.#inFlight = this.#send().finally(() => {
      this.#inFlight = undefined;
      // Lines that came while the write was out wait for the next batch.
      if (this.#hasPending()) this.#schedule();
    });
  }

  async #send(): Promise<void> {
    const linesJson = this.#pending;
    const droppedLines = this.#pendingDropped;
    this.#pending = [];
    this.#pendingDropped = 0;
    const { id, attempt } = this.#job;
    try {
      await this.#store.appendJobLog({ workerId: this.#workerId, job: { id, attempt }, linesJson, droppedLines });
    } catch (thrown) {
      this.#log.debug(`Could not store ${linesJson.length} log lines of job ${id} (${coerceError(thrown).message}); they are dropped`, { jobId: id, attempt });
    }
  }
}
