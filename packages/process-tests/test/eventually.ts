/** Polls until `check` is truthy or the deadline passes. */
export async function eventually<R>(check: () => Promise<R>, timeoutMs: number, what: string): Promise<NonNullable<R>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<R>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
