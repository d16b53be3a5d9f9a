import type { Clock } from "@stint/core";
import { DashboardErrorCode, RequestRefused } from "./request-refused";

/** How many wrong credentials an address may send, and for how long it then waits. */
export interface SignInLimits {
  /** Wrong credentials accepted from one address within `windowMs`. */
  readonly failures: number;
  /** The window the failures are counted in, in ms; an address over the limit waits until its window ends. */
  readonly windowMs: number;
  /** Most addresses remembered at once; past it, the one remembered longest is forgotten. */
  readonly maxAddresses: number;
}

/** Ten wrong credentials per address per minute, 10,000 addresses remembered. */
export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = Object.freeze({ failures: 10, windowMs: 60_000, maxAddresses: 10_000 });

interface Window {
  readonly startedAt: number;
  failures: number;
}

/**
 * Counts wrong credentials (a wrong token typed into the sign-in page, a
 * wrong `Authorization` header) per remote address, in fixed windows, so
 * that guessing is slow: past the limit, every credential from that
 * address is refused with `429` and `Retry-After` until its window ends,
 * the right one too (else a guesser would learn when it guessed right).
 * The address is the socket's: behind a proxy every viewer shares the
 * proxy's, so one guesser makes everyone wait (a token of 16 characters
 * or more cannot be guessed at any rate; the limit keeps logs and load
 * small).
 *
 * @example
 * ```ts
 * const limiter = new SignInLimiter(DEFAULT_SIGN_IN_LIMITS, systemClock);
 * limiter.check("10.0.0.7");  // throws a 429 RequestRefused after 10 failures within a minute
 * limiter.fail("10.0.0.7");
 * ```
 */
export class SignInLimiter {
  readonly #limits: SignInLimits;
  readonly #clock: Pick<Clock, "now">;
  /** By address, oldest window first. */
  readonly #windows = new Map<string, Window>();

  constructor(limits: SignInLimits, clock: Pick<Clock, "now">) {
    this.#limits = limits;
    this.#clock = clock;
  }

  /** Throws a `429` with `Retry-After` when `address` is over the limit. */
  check(address: string | undefined): void {
    const window = this.#current(address ?? "unknown", this.#clock.now());
    if (window === undefined || window.failures < this.#limits.failures) return;
    const retryAfter = Math.max(1, Math.ceil((window.startedAt + this.#limits.windowMs - this.#clock.now()) / 1_000));
    throw new RequestRefused(DashboardErrorCode.TooManyAttempts, `Too many wrong credentials from this address; try again in ${retryAfter} s.`, {
      "Retry-After": String(retryAfter),
    });
  }

  /** Counts one wrong credential from `address`. */
  fail(address: string | undefined): void {
    const key = address ?? "unknown";
    const now = this.#clock.now();
    const window = this.#current(key, now);
    if (window !== undefined) {
      window.failures += 1;
      return;
    }
    if (this.#windows.size >= this.#limits.maxAddresses) this.#sweep(now);
    while (this.#windows.size >= this.#limits.maxAddresses) this.#windows.delete(this.#windows.keys().next().value!);
    this.#windows.set(key, { startedAt: now, failures: 1 });
  }

  /** The window of `address` if it has not ended (an ended one is forgotten). */
  #current(address: string, now: number): Window | undefined {
    const window = this.#windows.get(address);
    if (window === undefined || now - window.startedAt < this.#limits.windowMs) return window;
    this.#windows.delete(address);
    return undefined;
  }

  #sweep(now: number): void {
    for (const [address, window] of this.#windows) if (now - window.startedAt >= this.#limits.windowMs) this.#windows.delete(address);
  }
}
