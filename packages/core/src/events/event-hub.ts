import { coerceError } from "../errors/coerce-error";
import type { Logger } from "../logging/logger";
import { isThenable } from "../validation/is-thenable";

/** A subscriber to one event; whatever it returns (a promise included) is not awaited. */
export type EventListener<E> = (event: E) => unknown;

/** Failures of one listener are reported on its 1st, 10th, 100th, … failure, so a broken listener cannot flood the log. */
function isReportedFailure(count: number): boolean {
  return count === 1 || (count % 10 === 0 && Number.isInteger(Math.log10(count)));
}

/**
 * A typed, synchronous event emitter: `Events` maps each event name to its
 * payload type. Listeners are called in subscription order, without
 * awaiting what they return; a listener that throws or whose promise
 * rejects is caught and reported (a `warn` line on its 1st, 10th, 100th …
 * failure, with the count), and never affects the emitter or the other
 * listeners. A listener that blocks synchronously blocks the event loop,
 * and with it the worker: hand slow work to a promise.
 *
 * @example
 * ```ts
 * const stop = worker.events.on("job.failed", (event) => alerts.notify(event.jobId, event.error));
 * // …
 * stop();
 * ```
 */
export class EventHub<Events extends object> {
  /** Copied on every change, so an emit in progress walks a stable list. */
  readonly #listeners = new Map<keyof Events, readonly EventListener<never>[]>();
  readonly #failures = new WeakMap<EventListener<never>, number>();
  #log: Logger | undefined;

  constructor(options: { readonly log?: Logger } = {}) {
    this.#log = options.log;
  }

  /**
   * Calls `listener` with every `name` event from now on; returns a function
   * that unsubscribes it.
   *
   * @example
   * ```ts
   * const off = events.on("job.succeeded", (event) => console.log(event.jobId, event.durationMs));
   * ```
   */
  on<K extends keyof Events>(name: K, listener: EventListener<Events[K]>): () => void {
    if (typeof listener !== "function") throw new TypeError(`events.on("${String(name)}", listener): listener must be a function`);
    this.#listeners.set(name, [...(this.#listeners.get(name) ?? []), listener]);
    return () => this.off(name, listener);
  }

  /** Removes `listener` from `name` (its latest subscription, when added twice). */
  off<K extends keyof Events>(name: K, listener: EventListener<Events[K]>): void {
    const current = this.#listeners.get(name);
    const index = current?.lastIndexOf(listener) ?? -1;
    if (current === undefined || index < 0) return;
    const next = current.filter((_, at) => at !== index);
    if (next.length === 0) this.#listeners.delete(name);
    else this.#listeners.set(name, next);
  }

  /** How many listeners `name` has: emitters check it before they build an event nobody hears. */
  listenerCount(name: keyof Events): number {
    return this.#listeners.get(name)?.length ?? 0;
  }

  /** Where listener failures are reported when the hub was made without a logger (the first one given wins). */
  reportListenerErrorsTo(log: Logger): void {
    this.#log ??= log;
  }

  /** Calls every listener of `name` with `event`; never throws. */
  emit<K extends keyof Events>(name: K, event: Events[K]): void {
    const listeners = this.#listeners.get(name);
    if (listeners === undefined) return;
    for (const listener of listeners as readonly EventListener<Events[K]>[]) {
      try {
        const returned = listener(event);
        if (isThenable(returned)) returned.then(undefined, (error: unknown) => this.#failed(name, listener, error));
      } catch (error) {
        this.#failed(name, listener, error);
      }
    }
  }

  #failed(name: keyof Events, listener: EventListener<never>, error: unknown): void {
    const count = (this.#failures.get(listener) ?? 0) + 1;
    this.#failures.set(listener, count);
    if (!isReportedFailure(count)) return;
    const message = `A listener of ${String(name)} failed (${count} ${count === 1 ? "time" : "times"} so far): ${coerceError(error).message}; outcomes and other listeners are not affected`;
    if (this.#log !== undefined) this.#log.warn(message, { event: String(name), failures: count });
    else process.emitWarning(message, { code: "STINT_LISTENER_FAILED" });
  }
}
