import type { ClaimedJob } from "../job/job-record";
import type { Clock } from "../time/clock";
import type { AttemptPipeline } from "./attempt-pipeline";
import type { HandlerSlots } from "./handler-slots";
import type { RunStop } from "./run-stop";
import type { StopReason } from "./run-summary";
import { settleWithin } from "./settle-within";

/** After shutdown, longest wait for the writes that give jobs back (bounded further by the lease). */
const GIVE_BACK_MS = 5_000;

/**
 * A claim the stop abandoned while its statement was in flight, and when
 * it was sent: the server may still commit it, so whatever it claimed is
 * given back with the buffer once it answers.
 */
export interface AbandonedClaim {
  readonly jobs: Promise<readonly ClaimedJob[]>;
  readonly sentAt: number;
}

/** What a run's shutdown works on. */
export interface RunShutdownParts<T> {
  readonly slots: HandlerSlots<T>;
  readonly pipeline: AttemptPipeline<T>;
  readonly clock: Clock;
  readonly leaseMs: number;
}

/** How the claim loop ended, and what the shutdown may wait for. */
export interface RunShutdownCause {
  readonly stoppedBecause: StopReason;
  readonly abandoned?: AbandonedClaim;
  readonly stop: RunStop;
  /** How long started attempts may run on once the run was told to stop. */
  readonly shutdownTimeoutMs: number;
  /** The run's wake-up subscription, closed on the way out. */
  readonly wakeups?: { close(): Promise<void> };
}

/**
 * Ends a run once its claim loop has: buffered jobs (and those of a claim
 * abandoned in flight) go back unspent at once; started attempts finish,
 * or, once the run was told to stop, get `shutdownTimeoutMs` and are then
 * aborted and given back; the dead-hook runner stops (after the pending
 * hooks, for a drained run); then the give-back writes, the outcome
 * writes and the wake-up subscription get a bounded wait, and the lease
 * keeper stops.
 *
 * @example
 * ```ts
 * await shutDownRun({ slots, pipeline, clock, leaseMs }, { stoppedBecause: "drained", stop, shutdownTimeoutMs: 30_000 });
 * ```
 */
export async function shutDownRun<T>(parts: RunShutdownParts<T>, cause: RunShutdownCause): Promise<void> {
  const { slots, pipeline, clock, leaseMs } = parts;
  const { stoppedBecause, stop } = cause;
  slots.stop();
  const givingBack = giveBackUnstarted(slots, cause.abandoned);
  await finishStarted(slots, stop.signal, cause.shutdownTimeoutMs, clock);
  // A drained run also runs the queue's pending onDead hooks (within its budget); a stopped one lets running hooks finish.
  await pipeline.deadHooks.stop(stoppedBecause === "drained" ? "when-empty" : "now", stop.signal);
  stop.dispose();
  // Writes and closes on a connection that stopped answering must not keep a stopping worker alive.
  const giveBackMs = Math.min(GIVE_BACK_MS, leaseMs);
  await settleWithin(Promise.all([givingBack, slots.allStarted(), cause.wakeups?.close(), pipeline.recorder.drain()]), giveBackMs, clock);
  await pipeline.leases.stop();
}

/**
 * Hands every buffered attempt back at once: none of them started. So are
 * the jobs of a claim the stop abandoned in flight, once it answers.
 */
async function giveBackUnstarted<T>(slots: HandlerSlots<T>, abandoned: AbandonedClaim | undefined): Promise<void> {
  const buffered = slots.giveBackBuffered();
  if (abandoned !== undefined) {
    const late = await abandoned.jobs.catch(() => [] as readonly ClaimedJob[]);
    await slots.giveBack(slots.claimedLate(late, abandoned.sentAt));
  }
  await buffered;
}

/**
 * Lets started attempts finish; once `signal` has aborted, gives them
 * `shutdownTimeoutMs`, then aborts the rest with `ShutdownError` (they are
 * given back; the run waits a bounded time for those writes).
 */
async function finishStarted<T>(slots: HandlerSlots<T>, signal: AbortSignal, shutdownTimeoutMs: number, clock: Clock): Promise<void> {
  if (slots.unrecorded === 0) return;
  await Promise.race([slots.allStarted(), whenAborted(signal)]);
  if (slots.unrecorded === 0) return;
  await settleWithin(slots.allStarted(), shutdownTimeoutMs, clock);
  slots.abortStarted();
}

/** Resolves when `signal` aborts (never otherwise). */
function whenAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
