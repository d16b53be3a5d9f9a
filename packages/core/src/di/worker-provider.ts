import type { DependencyContainer, InjectionToken } from "tsyringe";
import { ConfigError } from "../errors/config-errors";
import type { AnyQueueWorker, WorkerClass } from "./worker-class";

/** How the container makes a worker: tsyringe constructs a decorated class; a factory constructs one that lists `inject`. */
export type WorkerProvider = { readonly useClass: WorkerClass } | { readonly useFactory: (container: DependencyContainer) => AnyQueueWorker };

/**
 * The metadata keys that tell a class was decorated: TypeScript's parameter
 * types (emitted with `emitDecoratorMetadata` for any decorated class), and
 * the key under which tsyringe's `@inject` records its tokens (present
 * without `emitDecoratorMetadata` too).
 */
const DECORATOR_METADATA_KEYS = ["design:paramtypes", "injectionTokens"];

/**
 * Checks how `worker` declares its constructor's dependencies and says how
 * to construct it. A class with an `inject` list (its own, or its
 * parent's when it is not decorated itself) is built by a factory that
 * resolves each token from the container doing the resolving, so a child
 * container's registrations win, as they do for a decorated class. A
 * decorated class, or one whose constructor takes no parameters, is left
 * to tsyringe, as before. A class that declares nothing, or an `inject`
 * list that cannot be right, is a `ConfigError` now rather than at
 * resolution.
 */
export function workerProvider(worker: WorkerClass): WorkerProvider {
  const name = className(worker);
  const ownInject = Object.prototype.hasOwnProperty.call(worker, "inject");
  // A subclass decorated for a constructor of its own must not take the list its parent declared for another.
  if (!ownInject && hasDecoratorMetadata(worker)) return { useClass: worker };
  if (worker.inject !== undefined || ownInject) return { useFactory: factoryOf(worker, checkedInject(worker, name), name) };
  if (worker.length === 0) return { useClass: worker };
  throw new ConfigError(
    "workers",
    `${name}'s constructor takes ${worker.length} parameter${worker.length === 1 ? "" : "s"}, but the class does not say what to inject into ${worker.length === 1 ? "it" : "them"}: ` +
      `decorate the class with @injectable() and each parameter with @inject(TOKEN), ` +
      `or declare static inject = [TOKEN, ...] with one token per parameter, in order (for example static inject = [JOB_STORE, LOGGER])`,
  );
}

function checkedInject(worker: WorkerClass, name: string): readonly InjectionToken[] {
  const inject: unknown = worker.inject;
  if (!Array.isArray(inject)) {
    throw new ConfigError(
      `${name}.inject`,
      `must be an array of injection tokens, one per constructor parameter (static inject = [JOB_STORE, LOGGER]), got ${describe(inject)}`,
    );
  }
  for (const [index, token] of inject.entries()) {
    if (!isInjectionToken(token)) {
      throw new ConfigError(
        `${name}.inject[${index}]`,
        `must be an injection token (a symbol such as JOB_STORE, a class or a string), got ${describe(token)}${token === undefined ? " (an import of a name its module does not export?)" : ""}`,
      );
    }
  }
  // A default value, a rest parameter or an inherited constructor makes `length` count fewer parameters than there are, never more.
  if (inject.length < worker.length) {
    throw new ConfigError(
      `${name}.inject`,
      `lists ${inject.length} token${inject.length === 1 ? "" : "s"}, but the constructor takes ${worker.length} parameters: give one token per parameter, in order`,
    );
  }
  return Object.freeze([...(inject as readonly InjectionToken[])]);
}

function factoryOf(worker: WorkerClass, tokens: readonly InjectionToken[], name: string): (container: DependencyContainer) => AnyQueueWorker {
  return (container) => {
    const parameters = tokens.map((token, index) => {
      try {
        return container.resolve<unknown>(token);
      } catch (error) {
        throw new ConfigError(
          `${name}.inject[${index}]`,
          `${tokenName(token)} could not be resolved: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    });
    return new worker(...(parameters as never[]));
  };
}

function hasDecoratorMetadata(worker: WorkerClass): boolean {
  const reflect = Reflect as unknown as { getOwnMetadata?: (key: string, target: object) => unknown };
  // Without the polyfill's reader the question cannot be asked: tsyringe decides, as before.
  if (typeof reflect.getOwnMetadata !== "function") return true;
  return DECORATOR_METADATA_KEYS.some((key) => reflect.getOwnMetadata!(key, worker) !== undefined);
}

function isInjectionToken(value: unknown): value is InjectionToken {
  if (typeof value === "string" || typeof value === "symbol" || typeof value === "function") return true;
  // tsyringe's delay(() => Class) gives an object that builds a proxy.
  return typeof value === "object" && value !== null && typeof (value as { createProxy?: unknown }).createProxy === "function";
}

function className(worker: WorkerClass): string {
  return worker.name === "" ? "an anonymous worker class" : worker.name;
}

function tokenName(token: InjectionToken): string {
  if (typeof token === "symbol") return token.toString();
  if (typeof token === "string") return JSON.stringify(token);
  if (typeof token === "function") return token.name === "" ? "an anonymous class" : token.name;
  return "a delayed class";
}

function describe(value: unknown): string {
  switch (typeof value) {
    case "undefined":
      return "undefined";
    case "function":
      return `a function (${value.name === "" ? "anonymous" : value.name})`;
    case "object":
      return value === null ? "null" : "an object";
    case "symbol":
      return `a symbol (${value.toString()})`;
    case "string":
      return `a string (${JSON.stringify(value)})`;
    default:
      return `a ${typeof value} (${String(value)})`;
  }
}
