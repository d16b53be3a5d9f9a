/** Told once when an attempt's signal aborts (see {@link AttemptSignal.watch}). */
export interface AbortWatcher {
  attemptAborted(reason: Error): void;
}

/**
 * The abort signal of one attempt, made cheap for the common case: the
 * `AbortController` that `ctx.signal` exposes is created only when a
 * handler reads it, and the executor waits on a plain promise (or, for a
 * batch's many attempts, sets a watcher: no promise per attempt). `abort`
 * keeps the first reason.
 *
 * @example
 * ```ts
 * const signal = new AttemptSignal();
 * setTimeout(() => signal.abort(new JobTimeoutError(5_000)), 5_000);
 * await Promise.race([work, signal.aborted]);
 * ```
 */
export class AttemptSignal {
  #reason: Error | undefined;
  #controller: AbortController | undefined;
  #aborted: Promise<Error> | undefined;
  #resolve: ((reason: Error) => void) | undefined;
  #watcher: AbortWatcher | undefined;

  /** Why the attempt must stop, once it must. */
  get reason(): Error | undefined {
    return this.#reason;
  }

  /** The `AbortSignal` handed to the handler as `ctx.signal`. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Resolves with the reason when the attempt is aborted (never otherwise). */
  get aborted(): Promise<Error> {
    if (this.#aborted === undefined) {
      this.#aborted = this.#reason !== undefined ? Promise.resolve(this.#reason) : new Promise<Error>((resolve) => (this.#resolve = resolve));
    }
    return this.#aborted;
  }

  /**
   * Tells `watcher` once when the attempt is aborted, in a microtask of its
   * own (at once, in one, when it is aborted already): the code that aborts
   * never runs the watcher's work inside its own loop. One watcher per
   * signal; a second replaces the first.
   */
  watch(watcher: AbortWatcher): void {
    this.#watcher = watcher;
    if (this.#reason !== undefined) tellLater(watcher, this.#reason);
  }

  /** Stops the attempt with `reason`; later calls change nothing. */
  abort(reason: Error): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.#resolve?.(reason);
    this.#controller?.abort(reason);
    if (this.#watcher !== undefined) tellLater(this.#watcher, reason);
  }
}

function tellLater(watcher: AbortWatcher, reason: Error): void {
  queueMicrotask(() => watcher.attemptAborted(reason));
}
