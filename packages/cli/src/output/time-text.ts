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

/** An instant as `2030-01-31 09:00:00Z` (UTC, to the second), or `-` for none. */
export function formatTime(date: Date | null | undefined): string {
  if (date === null || date === undefined) return "-";
  return `${date.toISOString().slice(0, 19).replace("T", " ")}Z`;
}
