/**
 * Whether `value` is a promise or another object with a `then` method: an
 * answer to await, where anything else is a value returned at once.
 *
 * @example
 * ```ts
 * const parsed = hooks.parse(payload);
 * const item = isThenable(parsed) ? await parsed : parsed;
 * ```
 */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}
