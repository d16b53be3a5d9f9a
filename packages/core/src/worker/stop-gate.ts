/**
 * A gate a loop waits at until something happens: `open()` releases every
 * current waiter; an aborted signal releases too (without rejecting).
 */
export class StopGate {
  #waiters: Array<() => void> = [];

  /** Resolves at the next `open()` or when `signal` aborts. */
  wait(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const onAbort = (): void => done();
      const done = (): void => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      this.#waiters.push(done);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Releases everyone waiting now. */
  open(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const release of waiters) release();
  }
}
