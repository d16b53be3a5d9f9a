/**
 * The abort signal of one attempt, made cheap for the common case: the
 * `AbortController` that `ctx.signal` exposes is created only when a
 * handler reads it, and the executor waits on a plain promise. `abort`
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

  /** Stops the attempt with `reason`; later calls change nothing. */
  abort(reason: Error): void {
    if (this.#reason !== undefined) return;
    this.#reason = reason;
    this.#resolve?.(reason);
    this.#controller?.abort(reason);
  }
}
