import { coerceError } from "./coerce-error";
import { PermanentError, RetryableError, SnoozeError } from "./job-errors";

/**
 * Marks an error as permanent: the job goes to `dead` now, without the
 * attempts it has left. Throw what it returns.
 *
 * @example
 * ```ts
 * if (response.status === 404) throw permanent(new Error("customer not found"));
 * ```
 */
export function permanent(error: unknown): PermanentError {
  const cause = coerceError(error);
  return new PermanentError(cause.message, { cause });
}

/**
 * Asks for another attempt after `delayMs` instead of the backoff policy's
 * delay (a rate limit's `Retry-After`, say). Still spends an attempt.
 *
 * @example
 * ```ts
 * if (response.status === 429) throw retryAfter(30_000, new Error("rate limited"));
 * ```
 */
export function retryAfter(delayMs: number, error?: unknown): RetryableError {
  const cause = error === undefined ? undefined : coerceError(error);
  return new RetryableError(cause?.message ?? `retry requested after ${delayMs} ms`, {
    cause,
    retryAfterMs: delayMs,
  });
}

/**
 * Runs the job again after `delayMs` without spending an attempt: the job
 * is waiting for something, not failing. Throw what it returns.
 *
 * @example
 * ```ts
 * if (!(await exportIsReady(id))) throw snooze(60_000);
 * ```
 */
export function snooze(delayMs: number): SnoozeError {
  return new SnoozeError(delayMs);
}
