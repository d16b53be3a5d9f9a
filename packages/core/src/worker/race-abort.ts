/**
 * The rejections waiting on each signal. One `abort` listener per signal
 * serves every race on it: adding and removing an event listener for each
 * claim and write cost more than the write's own work on the path from
 * enqueue to handler start.
 */
const WAITING = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

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
  const waiting = waitingOn(signal);
  return new Promise<R>((resolve, reject) => {
    waiting.add(reject);
    work.then(
      (value) => {
        waiting.delete(reject);
        resolve(value);
      },
      (error: unknown) => {
        waiting.delete(reject);
        reject(error);
      },
    );
  });
}

function waitingOn(signal: AbortSignal): Set<(reason: unknown) => void> {
  let waiting = WAITING.get(signal);
  if (waiting === undefined) {
    const rejections = new Set<(reason: unknown) => void>();
    signal.addEventListener(
      "abort",
      () => {
        for (const reject of rejections) reject(signal.reason);
        rejections.clear();
      },
      { once: true },
    );
    WAITING.set(signal, rejections);
    waiting = rejections;
  }
  return waiting;
}
