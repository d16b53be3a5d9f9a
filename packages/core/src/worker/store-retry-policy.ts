import { coerceError } from "../errors/coerce-error";
import { ErrorCode } from "../errors/error-codes";
import { hasErrorCode } from "../errors/stint-error";
import type { Clock } from "../time/clock";
import { raceAbort } from "./race-abort";

/** Longest wait between two tries. */
const MAX_DELAY_MS = 5_000;

/** Who hears of a store call that failed for the connection's sake: the worker's lease keeper. */
export interface OutageListener {
  connectionLost(why: string): void;
}

/**
 * The one rule for store calls on a worker's hot path — claims, heartbeats,
 * outcome writes: an `InfrastructureError` (a dropped connection, a
 * restarting server, a statement that timed out) is tried again after
 * `delayBefore(n)` (50 ms doubling to 5 s); any other error is final. How
 * long to keep trying is the caller's: claims until the run stops, writes
 * while the lease could still be theirs, heartbeats until the lease's
 * deadline (they retry by sending the next one sooner).
 *
 * @example
 * ```ts
 * const policy = new StoreRetryPolicy(clock);
 * const jobs = await policy.run(() => store.claimBatch(params), { giveUpAfterMs: 60_000, signal: stop });
 * ```
 */
export class StoreRetryPolicy {
  readonly #clock: Clock;
  readonly #outages: OutageListener | undefined;

  /** `outages` hears of every infrastructure error a call fails with, retried or not (a worker stops its unflushed claims). */
  constructor(clock: Clock, outages?: OutageListener) {
    this.#clock = clock;
    this.#outages = outages;
  }

  /** The wait before try `n + 1` after `n` failed tries. */
  delayBefore(failedTries: number): number {
    return Math.min(50 * 2 ** Math.min(Math.max(failedTries, 1), 10), MAX_DELAY_MS);
  }

  /**
   * Calls `operation` until it succeeds. Resolves `undefined` when `signal`
   * aborts, whether a call is in flight (it is abandoned: a connection that
   * stopped answering must not hold up a stop) or a retry is waited for;
   * rejects with the last error when it is not an infrastructure error or
   * `giveUpAfterMs` has passed.
   */
  async run<R>(
    operation: () => Promise<R>,
    options: { readonly giveUpAfterMs: number; readonly signal?: AbortSignal; readonly onRetry?: (message: string) => void },
  ): Promise<R | undefined> {
    const { giveUpAfterMs, signal, onRetry } = options;
    const started = this.#clock.now();
    for (let tries = 1; ; tries += 1) {
      try {
        return await raceAbort(operation(), signal);
      } catch (thrown) {
        if (signal?.aborted) return undefined;
        const error = coerceError(thrown);
        const outage = hasErrorCode(error, ErrorCode.Infrastructure);
        if (outage) this.#outages?.connectionLost(error.message);
        if (!outage || this.#clock.now() - started >= giveUpAfterMs) throw error;
        onRetry?.(error.message);
        await this.#clock.sleep(this.delayBefore(tries), signal);
        if (signal?.aborted) return undefined;
      }
    }
  }
}
