/**
 * A gate a loop waits at until something happens: `open()` releases every
 * current waiter; an aborted signal releases that waiter alone (without
 * rejecting) and forgets it, so abandoned waits do not pile up.
 */
export class StopGate {
  readonly #waiters = new Set<() => void>();

  /** Resolves at the next `open()` or when `signal` aborts. */
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
  open(): void {
    for (const release of [...this.#waiters]) release();
  }
}
