/**
 * A wake-up call for a loop that waits: `wake()` releases every current
 * waiter, or, when nobody waits, the next `wait()` (a wake-up that comes
 * while the loop is busy is kept, not lost). An aborted signal releases
 * that waiter alone (without rejecting) and forgets it, so abandoned waits
 * do not pile up.
 */
export class WakeUp {
  readonly #waiters = new Set<() => void>();
  #pending = false;

  /** Resolves at the next `wake()` (at once if one came since the last wait) or when `signal` aborts. */
  wait(signal?: AbortSignal): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    if (signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        this.#waiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      this.#waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** Releases everyone waiting now, or the next waiter when nobody waits. */
  wake(): void {
    if (this.#waiters.size === 0) {
      this.#pending = true;
      return;
    }
    for (const release of [...this.#waiters]) release();
  }
}
