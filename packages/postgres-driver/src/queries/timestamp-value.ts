import { LATEST_DATE_MS } from "@stint/core/driver";

/**
 * A `timestamptz` as pg parsed it, as a valid `Date`: pg returns the numbers
 * `Infinity`/`-Infinity` for PostgreSQL's `infinity`/`-infinity` and an
 * invalid `Date` for a time past what a `Date` holds (after the year
 * 275760). Those become the `Date` bounds (see `LATEST_DATE_MS`), so every
 * row the table can hold reads as `Date`s that format, compare and sort.
 *
 * @example
 * ```ts
 * timestampValue(Infinity).toISOString(); // "+275760-09-13T00:00:00.000Z"
 * ```
 */
export function timestampValue(value: Date | number): Date {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? new Date(LATEST_DATE_MS) : value;
  return new Date(value < 0 ? -LATEST_DATE_MS : LATEST_DATE_MS);
}

/** {@link timestampValue}, keeping `null`. */
export function nullableTimestamp(value: Date | number | null): Date | null {
  return value === null ? null : timestampValue(value);
}

/**
 * A `timestamptz` read as milliseconds since the epoch (a `float8` the
 * query computed, cheaper to read than a timestamp's text), as a valid
 * `Date`, with ±infinity and times past a `Date`'s range at the bounds as
 * in {@link timestampValue}.
 *
 * @example
 * ```ts
 * timestampFromEpochMs(1_700_000_000_123).toISOString(); // "2023-11-14T22:13:20.123Z"
 * ```
 */
export function timestampFromEpochMs(ms: number): Date {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? new Date(ms < 0 ? -LATEST_DATE_MS : LATEST_DATE_MS) : date;
}
