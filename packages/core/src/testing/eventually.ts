import { coerceError } from "../errors/coerce-error";
import { integerOption, rejectUnknownOptions } from "../validation/option-checks";
import { MAX_TIMER_MS } from "../limits";

/** Options of {@link eventually}. */
export interface EventuallyOptions {
  /** Give up after this many milliseconds of real time. Default 10,000. */
  readonly timeoutMs?: number;
  /** Milliseconds between two checks. Default 20. */
  readonly intervalMs?: number;
  /** What is waited for, for the timeout's message ("the job to succeed"). Default "the condition". */
  readonly what?: string;
}

/** What a check returns when the condition holds: anything but `undefined`, `null`, `false`, `0` and `""`. */
export type Truthy<T> = Exclude<T, undefined | null | false | 0 | "">;

/**
 * Polls `check` until it returns a truthy value, and resolves to that value;
 * rejects once `timeoutMs` of real time have passed. A check that throws
 * counts as "not yet" (a server still starting, a row not written yet); the
 * timeout's error then carries the last error as its `cause`. For
 * conditions another process, a socket or a real timer brings about: with
 * a `ManualClock`, advance the clock instead.
 *
 * @example
 * ```ts
 * const job = await eventually(async () => {
 *   const found = await store.getJob({ id });
 *   return found?.state === "succeeded" && found;
 * }, { timeoutMs: 5_000, what: `job ${id} to succeed` });
 * ```
 */
export async function eventually<T>(check: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<Truthy<T>> {
  rejectUnknownOptions("eventually", options, ["timeoutMs", "intervalMs", "what"]);
  const timeoutMs = integerOption("timeoutMs", options.timeoutMs ?? 10_000, 0, MAX_TIMER_MS);
  const intervalMs = integerOption("intervalMs", options.intervalMs ?? 20, 0, MAX_TIMER_MS);
  const deadline = Date.now() + timeoutMs;
  let lastError: Error | undefined;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as Truthy<T>;
      lastError = undefined;
    } catch (thrown) {
      lastError = coerceError(thrown);
    }
    if (Date.now() >= deadline) {
      const waited = `timed out after ${timeoutMs} ms waiting for ${options.what ?? "the condition"}`;
      throw lastError === undefined ? new Error(waited) : new Error(`${waited}; the last check threw: ${lastError.message}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
