/**
 * Settles like `work`, or rejects with `signal.reason` as soon as `signal`
 * aborts, whichever comes first; without a signal it is `work` itself. A
 * late settlement of `work` is absorbed, never reported as unhandled.
 *
 * @example
 * ```ts
 * const result = await raceAbort(handler(item, ctx), controller.signal);
 * ```
 */
export function raceAbort<R>(work: Promise<R>, signal: AbortSignal | undefined): Promise<R> {
  if (signal === undefined) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<R>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
