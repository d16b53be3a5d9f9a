import { setMaxListeners } from "node:events";
import type { JobStore } from "../store/job-store";
import type { Clock } from "../time/clock";
import { awaitJobEnd, DEFAULT_WAIT_POLL_MS, type WaitOptions } from "./await-job";

/**
 * How many steps {@link awaitStepEnds} waits for at once. Each wait for a
 * job is a loop of its own (a watch, then a read on every hint and every
 * `pollIntervalMs`), so waiting for every final step of a fan-out of
 * 1,000 at once would cost 1,000 reads per poll interval: the number
 * watched is bounded, and the caller's single read of the workflow stands
 * in for the waits of the rest.
 */
export const MAX_WATCHED_STEPS = 16;

/** What {@link awaitStepEnds} takes besides the jobs: the caller's wait options, and the instant its whole wait ends. */
export interface StepEndsOptions {
  /** The caller's options of `awaitJobEnd` (`timeoutMs` is replaced by the time left until `deadline`). */
  readonly wait: WaitOptions;
  /** Milliseconds since the epoch, on the clock given, after which a wait rejects with `WaitTimeoutError`; `undefined` for none. */
  readonly deadline: number | undefined;
}

/** How one wait of a job ended: its id, and what it rejected with when it did not succeed. */
type StepEnd = { readonly jobId: string } | { readonly jobId: string; readonly error: unknown };

const LOOK_AGAIN = Symbol("look again");

/**
 * Waits for the jobs `jobIds` (in that order) to succeed, up to
 * {@link MAX_WATCHED_STEPS} at once, the next one taken as one succeeds,
 * and rejects as soon as one of those watched rejects, as `awaitJobEnd`
 * rejects (`JobFailedError` for one dead or cancelled, `WaitTimeoutError`
 * at `deadline`, the signal's reason). Resolves when all have succeeded,
 * or, while some are still not watched, after `pollIntervalMs`: the caller
 * then looks at them again, in one read, so that one of them that ends
 * dead is noticed within a poll interval instead of when every step before
 * it has ended. The waits it leaves are ended before it settles.
 *
 * @example
 * ```ts
 * await awaitStepEnds(store, ["812", "813"], { wait: { pollIntervalMs: 1_000 }, deadline: undefined }, clock);
 * ```
 */
export async function awaitStepEnds(store: JobStore, jobIds: readonly string[], options: StepEndsOptions, clock: Clock): Promise<void> {
  const unwatched = [...jobIds];
  const ended = new AbortController();
  // Each watched wait listens to it once: as many listeners as waits is the design, not a leak.
  setMaxListeners(MAX_WATCHED_STEPS + 1, ended.signal);
  const { signal } = options.wait;
  const passOn = (): void => ended.abort((signal as AbortSignal).reason);
  if (signal instanceof AbortSignal) {
    if (signal.aborted) passOn();
    else signal.addEventListener("abort", passOn, { once: true });
  }
  // A signal that is not one reaches awaitJobEnd as it is, which refuses it.
  const waitSignal = signal === undefined || signal instanceof AbortSignal ? ended.signal : signal;
  const watched = new Map<string, Promise<StepEnd>>();
  const watchNext = (): void => {
    const jobId = unwatched.shift()!;
    const timeoutMs = options.deadline === undefined ? undefined : Math.max(1, options.deadline - clock.now());
    const waitOptions: WaitOptions = { ...options.wait, signal: waitSignal, ...(timeoutMs === undefined ? {} : { timeoutMs }) };
    const end = awaitJobEnd(store, { id: jobId }, waitOptions, clock).then(
      (): StepEnd => ({ jobId }),
      (error: unknown): StepEnd => ({ jobId, error }),
    );
    watched.set(jobId, end);
  };
  try {
    while (watched.size < MAX_WATCHED_STEPS && unwatched.length > 0) watchNext();
    let lookAgain: Promise<typeof LOOK_AGAIN> | undefined =
      unwatched.length === 0 ? undefined : clock.sleep(options.wait.pollIntervalMs ?? DEFAULT_WAIT_POLL_MS, ended.signal).then(() => LOOK_AGAIN);
    while (watched.size > 0) {
      const waits: Promise<StepEnd | typeof LOOK_AGAIN>[] = [...watched.values()];
      const next = await Promise.race(lookAgain === undefined ? waits : [...waits, lookAgain]);
      if (next === LOOK_AGAIN) return;
      if ("error" in next) throw next.error;
      watched.delete(next.jobId);
      if (unwatched.length > 0) watchNext();
      // Every step left is watched now: each one's own wait notices its end.
      if (unwatched.length === 0) lookAgain = undefined;
    }
  } finally {
    ended.abort();
    if (signal instanceof AbortSignal) signal.removeEventListener("abort", passOn);
  }
}
