/**
 * The items of `source` until `signal` aborts: an abort ends the iteration
 * at once, even while `source` is waiting (a pipe that sends nothing), and
 * closes `source` (a stream is destroyed, which ends the read still waiting).
 *
 * @example
 * ```ts
 * for await (const chunk of untilAborted(process.stdin, context.signal)) handle(chunk);
 * ```
 */
export async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  const aborted = new Promise<"aborted">((resolveAborted) => {
    if (signal.aborted) resolveAborted("aborted");
    else signal.addEventListener("abort", () => resolveAborted("aborted"), { once: true });
  });
  let stopped = false;
  try {
    for (;;) {
      const pending = iterator.next();
      const next = await Promise.race([pending, aborted]);
      if (next === "aborted") {
        // The read still waiting is abandoned; whatever it ends with is of no interest.
        pending.catch(() => undefined);
        stopped = true;
        return;
      }
      if (next.done === true) return;
      yield next.value;
    }
  } finally {
    // An async iterator answers return() only after the read it is waiting on; end that read first.
    if (stopped) (source as { destroy?: () => void }).destroy?.();
    await Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
}
