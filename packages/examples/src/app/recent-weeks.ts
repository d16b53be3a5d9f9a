const DAY_MS = 86_400_000;

/**
 * The Mondays (`YYYY-MM-DD`, UTC) of the `count` full weeks before the week
 * of `now`, oldest first.
 *
 * @example
 * ```ts
 * recentWeeks(2, new Date("2025-06-12T10:00:00Z")); // ["2025-05-26", "2025-06-02"]
 * ```
 */
export function recentWeeks(count: number, now: Date): readonly string[] {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const thisMonday = midnight - ((now.getUTCDay() + 6) % 7) * DAY_MS;
  return Array.from({ length: count }, (_, index) => new Date(thisMonday - (count - index) * 7 * DAY_MS).toISOString().slice(0, 10));
}
