import type { Clock } from "../time/clock";

/** How a promise given to {@link settleWithin} ended, or that it did not end in time. */
export type SettledWithin<T> =
  { readonly status: "fulfilled"; readonly value: T } | { readonly status: "rejected"; readonly reason: unknown } | { readonly status: "timed-out" };

/** The reason the timer is cancelled with once the work settled (no exception is built). */
const SETTLED = "settled";

/**
 * Waits for `work` at most `ms` (and never past `signal`), without ever
 * rejecting: a store call on a connection that stopped answering must not
 * hold up the loop that made it. A late rejection of `work` is absorbed.
 *
 * @example
 * ```ts
 * const answer = await settleWithin(store.extendLeases(params), 5_000, clock);
 * if (answer.status === "fulfilled") renew(answer.value);
 * ```
 */
export async function settleWithin<T>(work: Promise<T>, ms: number, clock: Clock, signal?: AbortSignal): Promise<SettledWithin<T>> {
  const settled = work.then(
    (value) => ({ status: "fulfilled", value }) as const,
    (reason: unknown) => ({ status: "rejected", reason }) as const,
  );
  const timer = new AbortController();
  const timedOut = clock
    .sleep(ms, signal === undefined ? timer.signal : AbortSignal.any([signal, timer.signal]))
    .then(() => ({ status: "timed-out" }) as const);
  const answer = await Promise.race([settled, timedOut]);
  timer.abort(SETTLED);
  return answer;
}
