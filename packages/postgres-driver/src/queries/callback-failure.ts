/**
 * Carries an error thrown by a caller's callback (the effect of
 * `runEffectOnce`, the work of `completeInTransaction`) out of the
 * transaction it rolled back, so that the store rethrows that error as it
 * was thrown instead of translating it like a failure of stint's own SQL.
 * Never leaves the driver.
 */
export class CallbackFailure extends Error {
  constructor(readonly error: unknown) {
    super("a callback failed inside a transaction");
  }
}

/**
 * Runs a caller's callback, wrapping whatever it throws in a {@link CallbackFailure}.
 *
 * @example
 * ```ts
 * const value = await runCallback(() => effect(trx)); // a throw rolls the transaction back
 * ```
 */
export async function runCallback<T>(callback: () => Promise<T>): Promise<T> {
  try {
    return await callback();
  } catch (thrown) {
    throw new CallbackFailure(thrown);
  }
}
