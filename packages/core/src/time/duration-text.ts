// Durations as operators write them: `500ms`, `30s`, `4m`, `1h30m`, `2d`.
// One syntax for `stint run` flags and for the STINT_* settings variables.

const UNITS = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1_000],
  ["ms", 1],
] as const;

const SEGMENT = /(\d+)(ms|s|m|h|d)/y;

/**
 * Parses a duration such as `500ms`, `30s`, `4m`, `1h30m` or `2d` into
 * milliseconds: whole numbers, each unit at most once, largest unit first;
 * `0` alone is accepted. Returns `undefined` for anything else.
 *
 * @example
 * ```ts
 * parseDuration("1h30m"); // 5_400_000
 * parseDuration("1.5s");  // undefined
 * ```
 */
export function parseDuration(text: string): number | undefined {
  if (text === "0") return 0;
  let total = 0;
  let lastUnit = -1;
  SEGMENT.lastIndex = 0;
  while (SEGMENT.lastIndex < text.length) {
    const match = SEGMENT.exec(text);
    if (match === null) return undefined;
    const unit = UNITS.findIndex(([name]) => name === match[2]);
    if (unit <= lastUnit) return undefined;
    lastUnit = unit;
    total += Number(match[1]) * UNITS[unit]![1];
  }
  return lastUnit === -1 || !Number.isSafeInteger(total) ? undefined : total;
}

/**
 * Formats milliseconds as the shortest duration {@link parseDuration} reads
 * back exactly.
 *
 * @example
 * ```ts
 * formatDuration(5_400_000); // "1h30m"
 * formatDuration(1_500);     // "1s500ms"
 * formatDuration(0);         // "0ms"
 * ```
 */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`not a duration in milliseconds: ${ms}`);
  if (ms === 0) return "0ms";
  let rest = ms;
  let text = "";
  for (const [name, size] of UNITS) {
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count}${name}`;
    rest -= count * size;
  }
  return text;
}
