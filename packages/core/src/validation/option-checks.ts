import { ConfigError } from "../errors/config-errors";

/**
 * Checks that `value` is an integer in `[min, max]`; throws a `ConfigError`
 * naming `option` otherwise. Returns the value.
 *
 * @example
 * ```ts
 * const concurrency = integerOption("concurrency", input.concurrency, 1, 1000);
 * ```
 */
export function integerOption(option: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(option, `must be an integer from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}

/** Like {@link integerOption} for numbers that may have a fraction. */
export function numberOption(option: string, value: unknown, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw new ConfigError(option, `must be a number from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}

/**
 * `Array.isArray` for a parameter typed as a list, which JavaScript callers
 * may still pass anything for: it returns a plain boolean, so the parameter
 * keeps its element type (`Array.isArray` would narrow a readonly list to
 * `any[]`).
 *
 * @example
 * ```ts
 * if (!isArray(jobs)) throw new ConfigError("jobs", "must be an array of NewJob objects");
 * ```
 */
export function isArray(value: unknown): boolean {
  return Array.isArray(value);
}

/** Throws a `ConfigError` for keys of `input` that are not in `known` (catches typos). */
export function rejectUnknownOptions(where: string, input: object, known: readonly string[]): void {
  for (const key of Object.keys(input)) {
    if (!known.includes(key)) {
      throw new ConfigError(`${where}.${key}`, `is not a known option (known: ${known.join(", ")})`);
    }
  }
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
