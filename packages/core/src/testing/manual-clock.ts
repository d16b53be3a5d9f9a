import { ConfigError } from "../errors/config-errors";
import type { Clock } from "../time/clock";
import { settle } from "./settle";

interface Sleeper {
  readonly at: number;
  readonly wake: () => void;
}

/**
 * A {@link Clock} that moves only when a test says so. Every timer stint
 * sets goes through its `Clock` (backoff and idle waits, heartbeats, the
 * lease deadline watcher, job timeouts, shutdown and `onDead` timeouts,
 * the in-memory store's leases and `run_at`), so one `ManualClock` given
 * to a worker and to an `InMemoryJobStore` lets a test move both through
 * minutes in microseconds: `advance` wakes each sleeper at its time, in
 * order, and lets promise chains run between timers, so code awaiting a
 * timer proceeds before time moves on.
 *
 * @example
 * ```ts
 * const clock = new ManualClock();
 * const slept = clock.sleep(1_000);
 * await clock.advance(1_000); // slept resolves
 * await clock.set(new Date("2031-01-01T00:00:00Z"));
 * ```
 */
export class ManualClock implements Clock {
  #now: number;
  readonly #sleepers = new Set<Sleeper>();

  /** Starts at `start` (milliseconds since the epoch or a `Date`); default 2023-11-14T22:13:20Z. */
  constructor(start: number | Date = 1_700_000_000_000) {
    this.#now = typeof start === "number" ? start : start.getTime();
    if (!Number.isFinite(this.#now)) throw new ConfigError("start", "must be a finite time");
  }

  now(): number {
    return this.#now;
  }

  /** Resolves once `advance` or `set` moves time past `now() + ms`, or at once when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const sleeper: Sleeper = {
        at: this.#now + Math.max(0, ms),
        wake: () => {
          this.#sleepers.delete(sleeper);
          signal?.removeEventListener("abort", sleeper.wake);
          resolve();
        },
      };
      this.#sleepers.add(sleeper);
      signal?.addEventListener("abort", sleeper.wake, { once: true });
    });
  }

  /** How many sleeps are waiting for time to move. */
  get pendingSleeps(): number {
    return this.#sleepers.size;
  }

  /** Moves time forward by `ms`, waking each sleeper at its time, in order. */
  async advance(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0) throw new ConfigError("ms", `must be a finite number of milliseconds ≥ 0, got ${String(ms)}`);
    const target = this.#now + ms;
    await settle();
    for (;;) {
      const next = [...this.#sleepers].filter((sleeper) => sleeper.at <= target).sort((a, b) => a.at - b.at)[0];
      if (next === undefined) break;
      this.#now = Math.max(this.#now, next.at);
      next.wake();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  /** Moves time forward to `instant` as {@link advance} does; time never goes back. */
  async set(instant: Date | number): Promise<void> {
    const target = typeof instant === "number" ? instant : instant.getTime();
    if (!(target >= this.#now)) throw new ConfigError("instant", `must not be before the clock's time ${new Date(this.#now).toISOString()}`);
    return this.advance(target - this.#now);
  }

  /** Moves time forward without waking anyone, as a process paused by SIGSTOP sees it when it resumes. */
  jump(ms: number): void {
    this.#now += ms;
  }
}
