/**
 * Polls `check` until it returns something truthy, failing after
 * `timeoutMs`: tests wait for conditions, never for fixed times.
 *
 * @example
 * ```ts
 * await eventually(() => lock.held === false, 5_000, "the lock to be lost");
 * ```
 */
export async function eventually<R>(check: () => Promise<R> | R, timeoutMs = 10_000, what = "condition"): Promise<NonNullable<R>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A promise with its resolver, for handlers that wait on a test. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
