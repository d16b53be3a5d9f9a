import { setTimeout as delay } from "node:timers/promises";

/**
 * Polls `check` until it returns a value other than `undefined`/`false`, or
 * fails after `timeoutMs`. For conditions another process brings about.
 */
export async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(25);
  }
}
