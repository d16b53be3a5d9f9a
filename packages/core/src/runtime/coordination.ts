/**
 * Wake-ups for idle workers: the driver calls `onWake(queue)` when a job of
 * a watched queue may have become available (PostgreSQL: LISTEN/NOTIFY).
 * A hint only — a lost wake-up costs latency, never a job, because workers
 * poll as well.
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
   * Calls `onWake(queue)` when one of `queues` may have due jobs, and
   * `onConnectionLost()` (when given) the moment the source sees its
   * connection to the database fail: workers stop the handlers of claims
   * a database crash may have undone.
   */
  subscribe(queues: readonly string[], onWake: (queue: string) => void, onConnectionLost?: () => void): Promise<{ close(): Promise<void> }>;
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
