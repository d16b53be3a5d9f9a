/**
 * A wake-up call for a loop that waits: `wake()` releases every current
 * waiter; an aborted signal releases that waiter alone (without rejecting)
 * and forgets it, so abandoned waits do not pile up.
 */
export class WakeUp {
  readonly #waiters = new Set<() => void>();

  /** Resolves at the next `wake()` or when `signal` aborts. */
  wait(signal?: AbortSignal): Promise<void> {
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

  /** Releases everyone waiting now. */
  wake(): void {
    for (const release of [...this.#waiters]) release();
  }
}
