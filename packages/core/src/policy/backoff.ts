import { integerOption, numberOption } from "../validation/option-checks";

/** How long to wait before the next attempt after a failure. */
export interface BackoffOptions {
  /** Delay after the first failed attempt, in ms. Default 1,000. */
  readonly baseMs: number;
  /** Upper bound of the delay before jitter, in ms. Default 3,600,000 (one hour). */
  readonly maxMs: number;
  /** Relative jitter: 0.2 spreads each delay over ±20%. Default 0.2. */
  readonly jitter: number;
}

/** The backoff stint uses unless told otherwise. */
export const DEFAULT_BACKOFF: BackoffOptions = Object.freeze({ baseMs: 1_000, maxMs: 3_600_000, jitter: 0.2 });

/** Validates and freezes backoff options; messages name `backoff.<field>`. */
export function resolveBackoff(input: Partial<BackoffOptions> = {}): BackoffOptions {
  const baseMs = integerOption("backoff.baseMs", input.baseMs ?? DEFAULT_BACKOFF.baseMs, 0, 86_400_000);
  const maxMs = integerOption("backoff.maxMs", input.maxMs ?? DEFAULT_BACKOFF.maxMs, baseMs, 7 * 86_400_000);
  const jitter = numberOption("backoff.jitter", input.jitter ?? DEFAULT_BACKOFF.jitter, 0, 1);
  return Object.freeze({ baseMs, maxMs, jitter });
}

/**
 * The delay before the attempt after `attempt` failed:
 * `min(baseMs · 2^(attempt−1), maxMs)`, spread by `± jitter`. `random`
 * returns a number in [0, 1) (injected so tests control it).
 *
 * @example
 * ```ts
 * backoffDelay(3, { baseMs: 1000, maxMs: 60_000, jitter: 0.2 }, () => 0.5); // 4000
 * ```
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const exponent = Math.max(0, attempt - 1);
  const raw = Math.min(options.baseMs * 2 ** Math.min(exponent, 60), options.maxMs);
  const spread = raw * options.jitter * (2 * random() - 1);
  return Math.max(0, Math.round(raw + spread));
}
