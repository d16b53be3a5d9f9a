import type { JobAttempt } from "../store/job-store";

/** A running attempt an operator cancelled, as a {@link WakeupSource} reports it to the attempt's owner. */
export interface CancelledAttempt extends JobAttempt {
  readonly queue: string;
  /** The worker that held the attempt when it was cancelled (the job's last owner). */
  readonly workerId: string;
}

/**
 * What a {@link WakeupSource} tells one subscriber.
 *
 * @example
 * ```ts
 * const listener: WakeupListener = {
 *   onWake: () => gate.open(),
 *   onInterrupted: () => leases.connectionLost("the wake-up connection was lost"),
 * };
 * ```
 */
export interface WakeupListener {
  /** A job of `queue`, one of the subscribed queues, may have become available. */
  readonly onWake: (queue: string) => void;
  /**
   * The source lost its link to the store: wake-ups may have been missed,
   * and the store may have restarted (PostgreSQL: the listening connection
   * dropped, as every connection does when the server crashes). Workers
   * stop the handlers of claims a crash may have undone.
   */
  readonly onInterrupted?: () => void;
  /** An attempt of a subscribed queue that was running has been cancelled. */
  readonly onCancelled?: (attempt: CancelledAttempt) => void;
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
 * const subscription = await wakeups.subscribe(["send-invoice"], { onWake: () => gate.open() });
 * // …
 * await subscription.close();
 * ```
 */
export interface WakeupSource {
  /** Tells `listener` what happens to `queues` (see {@link WakeupListener}) until the subscription is closed. */
  subscribe(queues: readonly string[], listener: WakeupListener): Promise<{ close(): Promise<void> }>;
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
