import { ConfigError } from "../errors/config-errors";
import { ErrorCode } from "../errors/error-codes";
import { errorCodeOf } from "../errors/stint-error";
import { JobFailedError, JobNotFoundError, WaitTimeoutError } from "../errors/wait-errors";
import type { JobRecord } from "../job/job-record";
import type { JobState } from "../job/job-state";
import type { JobStore } from "../store/job-store";
import { systemClock, type Clock } from "../time/clock";
import { integerOption, rejectUnknownOptions } from "../validation/option-checks";
import { MAX_TIMER_MS } from "../limits";
import { WakeUp } from "../worker/wake-up";

/** Options of `client.waitFor`. */
export interface WaitOptions {
  /** Give up after this many milliseconds with a `WaitTimeoutError`. Default: wait as long as it takes. */
  readonly timeoutMs?: number;
  /** Aborting it ends the wait at once, rejecting with the signal's reason. */
  readonly signal?: AbortSignal;
  /**
   * How often the job is read when no notification comes: the fallback
   * for lost notifications, a dropped listening connection, or a store
   * without completion hints. Default 5 000.
   */
  readonly pollIntervalMs?: number;
}

/** Default of {@link WaitOptions.pollIntervalMs}. */
export const DEFAULT_WAIT_POLL_MS = 5_000;

const OPTION_KEYS = ["timeoutMs", "signal", "pollIntervalMs"];

/** A job that succeeded, as {@link awaitJobEnd} resolves with it. */
export type SucceededJob = JobRecord & { readonly state: "succeeded" };

/** The job {@link awaitJobEnd} waits for, and the queue it must belong to (when the caller named its kind). */
export interface WaitTarget {
  readonly id: string;
  readonly queue?: string;
}

/**
 * Waits until job `target.id` finishes and resolves with its row when it
 * succeeded. Rejects with `JobFailedError` when it is dead or cancelled,
 * `JobNotFoundError` when there is no such job (and, with `target.queue`,
 * with a `ConfigError` when the job belongs to another queue), `WaitTimeoutError`
 * after `timeoutMs`, and the signal's reason when `signal` aborts. A job
 * in `failed` (a retry is scheduled) is still waited for.
 *
 * How: it first watches the job through `store.completions` (when the
 * store has them), then reads it; after that it reads it again on every
 * hint and every `pollIntervalMs`. Reading after the watch is in place
 * means a job that finished just before is found by that read, and one
 * that finishes later is announced. A read that fails for a reason worth
 * retrying (the database is briefly unreachable) is tried again at the
 * next hint or poll.
 *
 * @example
 * ```ts
 * const job = await awaitJobEnd(store, { id: "812" }, { timeoutMs: 30_000 });
 * console.log(job.result);
 * ```
 */
export async function awaitJobEnd(store: JobStore, target: WaitTarget, options: WaitOptions = {}, clock: Clock = systemClock): Promise<SucceededJob> {
  const { timeoutMs, signal, pollIntervalMs } = checkWaitOptions(options);
  const jobId = target.id;
  if (typeof jobId !== "string" || !/^[1-9][0-9]{0,18}$/.test(jobId)) {
    throw new ConfigError("jobOrId", `must be a job id (a positive integer as a string) or what enqueue returned, got ${String(jobId)}`);
  }
  signal?.throwIfAborted();
  const ended = new AbortController();
  let lastState: JobState | undefined;
  const interrupted = new Promise<never>((_resolve, reject) => {
    signal?.addEventListener("abort", () => reject(signal.reason), { once: true, signal: ended.signal });
    if (timeoutMs === undefined) return;
    void clock.sleep(timeoutMs, ended.signal).then(() => {
      if (!ended.signal.aborted) reject(new WaitTimeoutError(jobId, timeoutMs, lastState));
    });
  });
  const watching = watchUntilFinished({ store, clock, jobId, pollIntervalMs, ended: ended.signal, queue: target.queue }, (state) => {
    lastState = state;
  });
  try {
    return await Promise.race([watching, interrupted]);
  } finally {
    ended.abort();
  }
}

interface WatchParts {
  readonly store: JobStore;
  readonly clock: Clock;
  readonly jobId: string;
  readonly pollIntervalMs: number;
  /** Aborts when the wait is decided (or given up): the loop stops at its next step. */
  readonly ended: AbortSignal;
  readonly queue: string | undefined;
}

/** The loop of {@link awaitJobEnd}: watch, then read on every hint and poll until the job finishes or the wait ends. */
async function watchUntilFinished(parts: WatchParts, seen: (state: JobState) => void): Promise<SucceededJob> {
  const { store, jobId, ended } = parts;
  const hints = new WakeUp();
  const watch = await store.completions?.watch(jobId, () => hints.wake());
  try {
    while (!ended.aborted) {
      const job = await readJob(store, jobId);
      if (job === null) throw new JobNotFoundError(jobId);
      if (job !== undefined) {
        if (parts.queue !== undefined && job.queue !== parts.queue) {
          throw new ConfigError("definition", `job ${jobId} is a "${job.queue}" job, not "${parts.queue}"`);
        }
        seen(job.state);
        if (job.state === "succeeded") return job as SucceededJob;
        if (job.state === "dead" || job.state === "cancelled") throw new JobFailedError(job as JobRecord & { state: "dead" | "cancelled" });
      }
      await hintOrPoll(hints, parts);
    }
    // The wait was decided elsewhere (timeout, abort): nobody reads this.
    return undefined as never;
  } finally {
    await watch?.close();
  }
}

/** The job; `null` when it does not exist; `undefined` when reading it failed in a way worth retrying. */
async function readJob(store: JobStore, jobId: string): Promise<JobRecord | null | undefined> {
  try {
    return (await store.getJob({ id: jobId })) ?? null;
  } catch (thrown) {
    if (errorCodeOf(thrown) === ErrorCode.Infrastructure) return undefined;
    throw thrown;
  }
}

/** Resolves at the next hint, after `pollIntervalMs`, or when the wait ends, whichever comes first; leaves no timer behind. */
async function hintOrPoll(hints: WakeUp, parts: WatchParts): Promise<void> {
  const turn = new AbortController();
  const endTurn = (): void => turn.abort();
  parts.ended.addEventListener("abort", endTurn, { once: true });
  const hint = hints.waiter();
  try {
    await Promise.race([hint.woken, parts.clock.sleep(parts.pollIntervalMs, turn.signal)]);
  } finally {
    hint.cancel();
    turn.abort();
    parts.ended.removeEventListener("abort", endTurn);
  }
}

function checkWaitOptions(options: WaitOptions): { timeoutMs?: number; signal?: AbortSignal; pollIntervalMs: number } {
  if (typeof options !== "object" || options === null) throw new ConfigError("waitFor", "options must be an object");
  rejectUnknownOptions("waitFor", options, OPTION_KEYS);
  const { signal } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new ConfigError("signal", "must be an AbortSignal");
  const pollIntervalMs = integerOption("pollIntervalMs", options.pollIntervalMs ?? DEFAULT_WAIT_POLL_MS, 10, MAX_TIMER_MS);
  if (options.timeoutMs === undefined) return { signal, pollIntervalMs };
  return { timeoutMs: integerOption("timeoutMs", options.timeoutMs, 1, MAX_TIMER_MS), signal, pollIntervalMs };
}
