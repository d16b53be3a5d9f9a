/**
 * Group commit for statements over job ids: ids added while a run is in
 * flight (or in the same turn of the event loop) go out together in the
 * next run, one run at a time. Each `add` resolves when the run that took
 * its ids ends, and rejects with that run's error.
 *
 * @example
 * ```ts
 * const registrations = new IdBatcher((ids) => registerWaiters(query, schema, { waiter, ids }));
 * await Promise.all(["1", "2", "3"].map((id) => registrations.add([id]))); // one statement
 * ```
 */
export class IdBatcher {
  readonly #run: (ids: readonly string[]) => Promise<unknown>;
  #pending = new Set<string>();
  /** The run that will take the pending ids. */
  #next: Promise<void> | undefined;
  #running: Promise<unknown> = Promise.resolve();

  constructor(run: (ids: readonly string[]) => Promise<unknown>) {
    this.#run = run;
  }

  add(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.#pending.add(id);
    this.#next ??= this.#runNext();
    return this.#next;
  }

  async #runNext(): Promise<void> {
    await this.#running.catch(() => undefined);
    await new Promise<void>((resolve) => setImmediate(resolve));
    const ids = [...this.#pending];
    this.#pending = new Set();
    this.#next = undefined;
    const run = this.#run(ids);
    this.#running = run;
    await run;
  }
}
