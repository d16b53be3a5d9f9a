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
    if (signal === undefined) return this.waiter().woken;
    if (signal.aborted) return Promise.resolve();
    const waiter = this.waiter();
    const onAbort = (): void => waiter.cancel();
    signal.addEventListener("abort", onAbort, { once: true });
    return waiter.woken.finally(() => signal.removeEventListener("abort", onAbort));
  }

  /**
   * A wait that the caller ends itself: `woken` resolves at the next
   * `wake()` (at once if one came since the last wait) or at `cancel()`,
   * which also forgets the waiter. Cheaper than a signal for a loop that
   * races the wake-up against a timer on every turn.
   *
   * @example
   * ```ts
   * const { woken, cancel } = wakeUp.waiter();
   * await Promise.race([woken, clock.sleep(100)]);
   * cancel();
   * ```
   */
  waiter(): { readonly woken: Promise<void>; readonly cancel: () => void } {
    if (this.#pending) {
      this.#pending = false;
      return { woken: Promise.resolve(), cancel: noop };
    }
    let release = noop;
    const woken = new Promise<void>((resolve) => {
      release = (): void => {
        this.#waiters.delete(release);
        resolve();
      };
    });
    this.#waiters.add(release);
    return { woken, cancel: release };
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

function noop(): void {}
