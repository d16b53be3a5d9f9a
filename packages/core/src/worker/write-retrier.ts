import { ErrorCode } from "../errors/error-codes";
import { coerceError } from "../errors/coerce-error";
import { hasErrorCode } from "../errors/stint-error";
import type { Clock } from "../time/clock";
import { raceAbort } from "./race-abort";

/**
 * Retries store calls that fail with `InfrastructureError` (a dropped
 * connection, a restarting server) with capped exponential backoff, for at
 * most `giveUpAfterMs`; other errors are rethrown at once.
 */
export class WriteRetrier {
  readonly #clock: Clock;
  readonly #giveUpAfterMs: number;

  constructor(clock: Clock, giveUpAfterMs = 60_000) {
    this.#clock = clock;
    this.#giveUpAfterMs = giveUpAfterMs;
  }

  /**
   * Calls `operation` until it succeeds. Resolves `undefined` when `signal`
   * aborts, whether a call is in flight (it is abandoned: a connection that
   * stopped answering must not hold up a stop) or a retry is waited for;
   * rejects when the error is not an infrastructure error or the time to
   * give up has come.
   */
  async run<R>(operation: () => Promise<R>, signal?: AbortSignal, onRetry?: (message: string) => void): Promise<R | undefined> {
    const started = this.#clock.now();
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await raceAbort(operation(), signal);
      } catch (thrown) {
        if (signal?.aborted) return undefined;
        const error = coerceError(thrown);
        const waited = this.#clock.now() - started;
        if (!hasErrorCode(error, ErrorCode.Infrastructure) || waited >= this.#giveUpAfterMs) throw error;
        onRetry?.(error.message);
        await this.#clock.sleep(Math.min(50 * 2 ** Math.min(attempt, 10), 5_000), signal);
        if (signal?.aborted) return undefined;
      }
    }
  }
}
