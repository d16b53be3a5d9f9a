import type { JobAttempt } from "../store/job-store";

/** A running attempt an operator cancelled, as a {@link WakeupSource} reports it to the attempt's owner. */
export interface CancelledAttempt extends JobAttempt {
  readonly queue: string;
  /** The worker that held the attempt when it was cancelled (the job's last owner). */
  readonly workerId: string;
}

/**
 * Wake-ups for idle workers: the driver calls `onWake(queue)` when a job of
 * a watched queue may have become available (PostgreSQL: LISTEN/NOTIFY).
 * A hint only — a lost wake-up costs latency, never a job, because workers
 * poll as well. The same channel tells a worker at once that an operator
 * cancelled one of its running attempts; a lost notice costs the time to
 * its next heartbeat, which reports cancels too.
 *
 * @example
 * ```ts
 * const subscription = await wakeups.subscribe(["send-invoice"], (queue) => gate.open());
 * // …
 * await subscription.close();
 * ```
 */
export interface WakeupSource {
  /**
   * Calls `onWake(queue)` when one of `queues` may have due jobs;
   * `onConnectionLost()` (when given) the moment the source sees its
   * connection to the database fail: workers stop the handlers of claims
   * a database crash may have undone; and `onCancelled(attempt)` (when
   * given) when an attempt of one of `queues` that was running is cancelled.
   */
  subscribe(
    queues: readonly string[],
    onWake: (queue: string) => void,
    onConnectionLost?: () => void,
    onCancelled?: (attempt: CancelledAttempt) => void,
  ): Promise<{ close(): Promise<void> }>;
}

/**
 * A lock that at most one process holds at a time, released when its holder
 * exits or loses its connection (PostgreSQL: a session advisory lock on a
 * dedicated connection). Used to elect the process that runs maintenance.
 *
 * @example
 * ```ts
 * if (await leader.tryAcquire()) await rescue.runOnce();
 * ```
 */
export interface LeaderLock {
  /** Takes the lock if free; true when this process holds it (now or already). */
  tryAcquire(): Promise<boolean>;
  /** Whether this process believes it holds the lock; false after its connection is lost. */
  readonly held: boolean;
  /** Gives the lock up (and its connection). Idempotent. */
  release(): Promise<void>;
}
