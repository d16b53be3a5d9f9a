/**
 * Lets pending promise callbacks and immediates run (five turns of the
 * event loop): what a test awaits after poking a worker so that the
 * worker's reaction has happened before the test looks. `ManualClock`
 * does it around every timer it fires.
 *
 * @example
 * ```ts
 * const run = worker.start({ mode: "loop", signal });
 * await settle(); // the first claim went out
 * ```
 */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}
