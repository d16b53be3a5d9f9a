/**
 * Milliseconds of the latest instant a JavaScript `Date` can hold,
 * `+275760-09-13T00:00:00.000Z`. PostgreSQL can store later times (up to
 * the year 294276, and `infinity`), which a driver reads as this instant;
 * `-infinity` is read as its negation, `-271821-04-20T00:00:00.000Z`. The
 * order of times is kept: `infinity` still sorts after every other time.
 */
export const LATEST_DATE_MS = 8_640_000_000_000_000;

/**
 * `"infinity"` or `"-infinity"` for a `Date` at the bounds a driver reads
 * PostgreSQL's infinite (or out-of-range) times as, otherwise `undefined`:
 * how output shows such a time instead of a year no one stored.
 *
 * @example
 * ```ts
 * infiniteTimeName(new Date(LATEST_DATE_MS));  // "infinity"
 * infiniteTimeName(new Date(0));               // undefined
 * ```
 */
export function infiniteTimeName(date: Date): "infinity" | "-infinity" | undefined {
  const ms = date.getTime();
  if (ms >= LATEST_DATE_MS) return "infinity";
  if (ms <= -LATEST_DATE_MS) return "-infinity";
  return undefined;
}
