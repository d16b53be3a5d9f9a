import { ConfigError } from "../errors/config-errors";
import type { RateLimit } from "./queue-controls";
import { MAX_RATE_LIMIT, MAX_RATE_PERIOD_MS } from "../limits";

const PERIODS: Readonly<Record<string, number>> = Object.freeze({
  s: 1_000,
  sec: 1_000,
  second: 1_000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
});

/**
 * Reads a rate limit written as `N/period`: `100/min`, `50/s`, `5/10s`,
 * `1000/hour`. Periods: `s`, `sec`, `second`, `m`, `min`, `minute`, `h`,
 * `hour`, optionally preceded by a count (`10s`, `5min`).
 *
 * @example
 * ```ts
 * parseRateLimit("100/min"); // { limit: 100, periodMs: 60_000 }
 * parseRateLimit("5/10s");   // { limit: 5, periodMs: 10_000 }
 * ```
 */
export function parseRateLimit(text: string, option = "rateLimit"): RateLimit {
  const match = /^\s*(\d+)\s*\/\s*(\d*)\s*([a-z]+)\s*$/i.exec(text);
  const unit = match?.[3]?.toLowerCase();
  const perUnit = unit === undefined ? undefined : PERIODS[unit];
  if (match === null || perUnit === undefined) {
    throw new ConfigError(option, `must look like 100/min, 50/s or 5/10s (periods: s, min, hour), got ${JSON.stringify(text)}`);
  }
  return checkRateLimit({ limit: Number(match[1]), periodMs: Number(match[2] === "" ? 1 : match[2]) * perUnit }, option);
}

/** `limit` as `N/period` text, the way {@link parseRateLimit} reads it. */
export function formatRateLimit(limit: RateLimit): string {
  for (const [unit, ms] of [
    ["hour", 3_600_000],
    ["min", 60_000],
    ["s", 1_000],
  ] as const) {
    if (limit.periodMs % ms === 0) return `${limit.limit}/${limit.periodMs === ms ? "" : limit.periodMs / ms}${unit}`;
  }
  return `${limit.limit}/${limit.periodMs / 1_000}s`;
}

/** `limit` if both numbers are whole and in range; a `ConfigError` naming `option` otherwise. */
export function checkRateLimit(limit: RateLimit, option = "rateLimit"): RateLimit {
  const { limit: count, periodMs } = limit;
  if (!Number.isInteger(count) || count < 1 || count > MAX_RATE_LIMIT) {
    throw new ConfigError(option, `limit must be a whole number from 1 to ${MAX_RATE_LIMIT}, got ${String(count)}`);
  }
  if (!Number.isInteger(periodMs) || periodMs < 1 || periodMs > MAX_RATE_PERIOD_MS) {
    throw new ConfigError(option, `period must be a whole number of milliseconds from 1 to ${MAX_RATE_PERIOD_MS} (a day), got ${String(periodMs)}`);
  }
  return Object.freeze({ limit: count, periodMs });
}
