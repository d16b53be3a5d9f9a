import { formatDuration, parseDuration } from "@stint/core/internal";
import { configError } from "../cli-error";

/**
 * Reads the duration given to `option`; a `configError` (exit 78) naming the
 * option when it is malformed or outside `[min, max]` milliseconds.
 *
 * @example
 * ```ts
 * durationOption("--max-runtime", "4m", { min: 1 }); // 240_000
 * ```
 */
export function durationOption(option: string, text: string, range: { readonly min?: number; readonly max?: number } = {}): number {
  const ms = parseDuration(text.trim());
  const min = range.min ?? 0;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  if (ms === undefined) {
    throw configError(`${option} must be a duration such as 500ms, 30s, 4m or 1h30m, got ${JSON.stringify(text)}`);
  }
  if (ms < min || ms > max) {
    throw configError(`${option} must be from ${formatDuration(min)} to ${formatDuration(max)}, got ${JSON.stringify(text)}`);
  }
  return ms;
}
