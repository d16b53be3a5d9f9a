import { infiniteTimeName } from "@stint/core/internal";

const PARTS = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1_000],
] as const;

/**
 * A human age or elapsed time with its two largest units: `192_000` →
 * `"3m 12s"`, `7_500_000` → `"2h 5m"`, `850` → `"850ms"`.
 *
 * @example
 * ```ts
 * humanDuration(queue.oldestDueAgeMs ?? 0);
 * ```
 */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms)) return ms > 0 ? "infinity" : "0ms";
  const whole = Math.max(0, Math.round(ms));
  if (whole < 1_000) return `${whole}ms`;
  const parts: string[] = [];
  let rest = whole;
  for (const [unit, size] of PARTS) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 || parts.length > 0) parts.push(`${count}${unit}`);
    if (parts.length === 2) break;
  }
  if (parts.length === 2 && parts[1]!.startsWith("0")) parts.pop();
  return parts.join(" ");
}

/**
 * An instant as `2030-01-31 09:00:00Z` (UTC, to the second), `-` for none,
 * and `infinity`/`-infinity` for PostgreSQL's infinite times (and times past
 * what a `Date` holds), which the driver reads as the `Date` bounds.
 *
 * @example
 * ```ts
 * formatTime(job.runAt); // "2030-01-31 09:00:00Z", or "infinity"
 * ```
 */
export function formatTime(date: Date | null | undefined): string {
  if (date === null || date === undefined) return "-";
  // Years past 9999 have a sign and more digits (`+200000-01-01T…`): cut the milliseconds, not a fixed width.
  return (
    infiniteTimeName(date) ??
    date
      .toISOString()
      .replace(/\.\d{3}Z$/, "Z")
      .replace("T", " ")
  );
}

/**
 * An instant as `--json` prints it: ISO 8601, `null` for none, and
 * `"infinity"`/`"-infinity"` as for {@link formatTime}.
 *
 * @example
 * ```ts
 * isoTime(job.finishedAt); // "2030-01-31T09:00:00.000Z", null or "infinity"
 * ```
 */
export function isoTime(date: Date | null): string | null {
  if (date === null) return null;
  return infiniteTimeName(date) ?? date.toISOString();
}
