import type { Clock } from "../../src/time/clock";

interface Sleeper {
  readonly at: number;
  readonly wake: () => void;
}

/**
 * A clock that moves only when a test says so. `sleep` waits for
 * `advance`; between timers, `advance` lets promise chains and I/O
 * callbacks run, so code awaiting a timer proceeds before time moves on.
 *
 * @example
 * ```ts
 * const clock = new FakeClock();
 * const slept = clock.sleep(1_000);
 * await clock.advance(1_000); // slept resolves
 * ```
 */
export class FakeClock implements Clock {
  #now: number;
  readonly #sleepers = new Set<Sleeper>();

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

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

  /** Moves time forward by `ms`, waking each sleeper at its time, in order. */
  async advance(ms: number): Promise<void> {
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

  /** Moves time forward without waking anyone, as a process paused by SIGSTOP sees it when it resumes. */
  jump(ms: number): void {
    this.#now += ms;
  }
}

/** Lets pending promise callbacks and immediates run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}
