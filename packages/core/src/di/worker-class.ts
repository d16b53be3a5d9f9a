import type { InjectionToken } from "tsyringe";
import type { AbstractQueueWorker } from "../worker/abstract-queue-worker";

/** Any worker, whatever its item type. */
export type AnyQueueWorker = AbstractQueueWorker<any>;

/**
 * A worker class the container can construct. It says what its
 * constructor's parameters are in one of two ways: tsyringe's decorators
 * (`@injectable()` on the class, `@inject(TOKEN)` on each parameter), or,
 * with no decorator syntax, a static `inject` list of injection tokens,
 * one per parameter, in order. A constructor without parameters needs
 * neither.
 *
 * @example
 * ```ts
 * class SendWelcomeWorker extends SchemaQueueWorker<SendWelcome> {
 *   static readonly inject = [JOB_STORE, LOGGER] as const;
 *   readonly job = SendWelcome;
 *   constructor(store: JobStore, log: Logger) {
 *     super(store, log);
 *   }
 *   protected async processItem(item: SendWelcome) {}
 * }
 * ```
 */
export type WorkerClass = (new (...args: never[]) => AnyQueueWorker) & {
  /** The token to resolve for each constructor parameter, in order. */
  readonly inject?: readonly InjectionToken[];
};

/**
 * The `inject` list that a constructor taking `Parameters` needs: one token
 * per parameter, each of a type the parameter accepts. A token typed
 * `InjectionToken<T>` (such as `JOB_STORE`) or a class is checked against
 * its parameter; a bare `symbol` or `string` carries no type and matches
 * any parameter.
 *
 * @example
 * ```ts
 * const tokens: InjectTokens<[JobStore, Logger]> = [JOB_STORE, LOGGER];
 * ```
 */
export type InjectTokens<Parameters extends readonly unknown[]> = { readonly [Index in keyof Parameters]: InjectionToken<Parameters[Index]> };

/**
 * `Worker` itself when its `inject` list fits its constructor's parameters
 * (or it has none); otherwise a type `Worker` is not assignable to, so that
 * the compiler reports the mismatch where the class is registered
 * (`Source has 1 element(s) but target requires 2`, or the two token types
 * that differ). Only a list of known length can be checked: declare it
 * `as const`.
 *
 * @example
 * ```ts
 * registerWorkers(container, [SendWelcomeWorker]); // each class is checked as CheckedWorkerClass<typeof SendWelcomeWorker>
 * ```
 */
export type CheckedWorkerClass<Worker> = Worker extends { readonly inject: infer List extends readonly unknown[] }
  ? number extends List["length"]
    ? Worker
    : Worker extends new (...args: infer Parameters) => AnyQueueWorker
      ? number extends Parameters["length"]
        ? Worker
        : Worker & { readonly inject: InjectTokens<Parameters> }
      : Worker
  : Worker;
