import { ConfigError } from "../errors/config-errors";
import { DEFAULT_MAX_PAYLOAD_BYTES, MAX_PAYLOAD_BYTES_LIMIT } from "../limits";
import { integerOption } from "../validation/option-checks";
import type { JobCompletionSource } from "./job-completion-source";
import type { JobStore } from "./job-store";
import { JOB_STORE_CHECKS, type CheckLimits, type StoreCall } from "./job-store-checks";

/** Options of {@link CheckedJobStore}. */
export interface CheckedJobStoreOptions {
  /**
   * Largest payload the store takes, in bytes of UTF-8 JSON, whatever built
   * the job (a job kind's own `maxPayloadBytes` may be lower). Default
   * `DEFAULT_MAX_PAYLOAD_BYTES` (1 MiB); at most `MAX_PAYLOAD_BYTES_LIMIT`.
   */
  readonly maxPayloadBytes?: number;
}

/**
 * Every `JobStore` call of a {@link CheckedJobStore}: the class installs
 * them from the one table of checks (`JOB_STORE_CHECKS`), which TypeScript
 * holds to every call of `JobStore`, and this declaration types them.
 *
 * @example
 * ```ts
 * const store: JobStore = checkedJobStore(new MyStore()); // every call checked, then forwarded
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- it exists to merge JobStore's calls into the class below
export interface CheckedJobStore<Tx = unknown> extends JobStore<Tx> {}

/**
 * A `JobStore` that checks every argument of every call before handing it
 * to the store it wraps, so that a store needs no checks of its own and
 * every store refuses the same things with the same errors: a queue name
 * with an `InvalidNameError`; a payload, meta or progress value that is
 * too large or that `jsonb` cannot store with a `PayloadError`; any other
 * field with a `ConfigError` naming it. A refused call rejects before the
 * store sees it. What a store alone can judge (whether an id is one it
 * issued, whether a transaction is its own) stays with the store.
 *
 * Each call runs its check from one table (`JOB_STORE_CHECKS`) and then
 * the same call of the wrapped store. The calls a worker makes for every
 * batch (claim, lease, finalize) are checked in O(1) per call and per job,
 * and their checks allocate nothing unless they refuse; an enqueue's payload and meta
 * are scanned once, for their size and for text `jsonb` cannot store.
 * `JobClient`, `QueueAdmin` and every worker wrap the store they are given
 * (see {@link checkedJobStore}); a driver's registration hands out a
 * checked store, so that operator code calling it directly is checked too.
 *
 * @example
 * ```ts
 * class MyStore implements JobStore { … }           // no argument checks needed
 * container.registerInstance(JOB_STORE, checkedJobStore(new MyStore(), { maxPayloadBytes: 262_144 }));
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see the interface above
export class CheckedJobStore<Tx = unknown> {
  readonly #store: JobStore<Tx>;
  readonly #limits: CheckLimits;

  /** Checks `options` (a `ConfigError` naming the option); wraps `store`, which it never calls here. */
  constructor(store: JobStore<Tx>, options: CheckedJobStoreOptions = {}) {
    if (typeof store !== "object" || store === null) throw new ConfigError("store", "must be a JobStore");
    this.#store = store;
    this.#limits = Object.freeze({ maxPayloadBytes: payloadCeiling(options) });
  }

  /** The largest payload this store takes, in bytes of UTF-8 JSON. */
  get maxPayloadBytes(): number {
    return this.#limits.maxPayloadBytes;
  }

  /** The wrapped store's completion hints, if it has them. */
  get completions(): JobCompletionSource | undefined {
    return this.#store.completions;
  }

  static {
    for (const call of Object.keys(JOB_STORE_CHECKS) as StoreCall[]) {
      Object.defineProperty(this.prototype, call, { value: CheckedJobStore.#checkedCall(call), writable: true, configurable: true });
    }
  }

  /**
   * The method `call`: runs the call's check with the wrapper's limits,
   * then the same call of the wrapped store. A refusal is a rejected
   * promise, and the store is not called.
   */
  static #checkedCall(call: StoreCall): AnyCall {
    const check = JOB_STORE_CHECKS[call] as AnyCheck | null;
    return function (this: CheckedJobStore, ...args: unknown[]): Promise<unknown> {
      const store = this.#store as unknown as Readonly<Record<StoreCall, AnyCall>>;
      if (check === null) return store[call](...args);
      let verdict: AnyVerdict;
      try {
        verdict = check.apply(this.#limits, args);
      } catch (refusal) {
        return Promise.reject(refusal);
      }
      if (verdict === undefined) return store[call](...args);
      return "answer" in verdict ? Promise.resolve(verdict.answer) : store[call](...verdict.forward);
    };
  }
}

/**
 * `store` wrapped in a {@link CheckedJobStore}, or `store` itself when it
 * is one already (then `options` are not read): wrapping twice checks once. Core wraps every store it is
 * handed; call it yourself when you register a store of your own, to give
 * it a payload ceiling other than 1 MiB or to have calls made directly on
 * the registered store checked too.
 *
 * @example
 * ```ts
 * container.registerInstance(JOB_STORE, checkedJobStore(new MyStore()));
 * ```
 */
export function checkedJobStore<Tx>(store: JobStore<Tx>, options?: CheckedJobStoreOptions): CheckedJobStore<Tx> {
  // `instanceof` cannot know the wrapper's Tx: it is the one `store` was typed with.
  return store instanceof CheckedJobStore ? (store as CheckedJobStore<Tx>) : new CheckedJobStore(store, options);
}

/** The payload ceiling `options` ask for, checked (a `ConfigError` naming `maxPayloadBytes`). */
export function payloadCeiling(options: CheckedJobStoreOptions): number {
  if (typeof options !== "object" || options === null) throw new ConfigError("options", "must be an object");
  return integerOption("maxPayloadBytes", options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES, 2, MAX_PAYLOAD_BYTES_LIMIT);
}

/** A call as the generic wrapper sees it: any arguments, a promise of anything. */
type AnyCall = (...args: unknown[]) => Promise<unknown>;

/** What any row of `JOB_STORE_CHECKS` may settle, seen from the generic wrapper. */
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- a check that returns nothing (any void function) forwards the arguments
type AnyVerdict = void | { readonly forward: readonly unknown[] } | { readonly answer: unknown };

/** Any row of `JOB_STORE_CHECKS`, seen from the generic wrapper. */
type AnyCheck = (this: CheckLimits, ...args: unknown[]) => AnyVerdict;
