import { ConfigError } from "@stint/core";
import type { Kysely } from "kysely";

/**
 * True when `value` looks like a Kysely instance or transaction (checked by
 * shape, so it also works across duplicated copies of kysely).
 *
 * @example
 * ```ts
 * isKysely(db);            // true
 * isKysely(await pool.connect()); // false
 * ```
 */
export function isKysely(value: unknown): value is Kysely<any> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { executeQuery?: unknown }).executeQuery === "function" &&
    typeof (value as { getExecutor?: unknown }).getExecutor === "function" &&
    typeof (value as { selectFrom?: unknown }).selectFrom === "function"
  );
}

/**
 * Returns `value` when it is a Kysely instance or transaction; throws a
 * `ConfigError` naming `option` otherwise.
 *
 * @example
 * ```ts
 * const executor = assertKysely(options.transaction, "transaction");
 * ```
 */
export function assertKysely(value: unknown, option: string): Kysely<any> {
  if (!isKysely(value)) {
    throw new ConfigError(option, `must be a Kysely instance or transaction (Kysely<DB> or Transaction<DB>), got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Names what a refused option got, for its message: `null`, a primitive's
 * type, or an object's class.
 *
 * @example
 * ```ts
 * describeValue(new Map()); // "Map"
 * describeValue(42);        // "number"
 * ```
 */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  return value.constructor?.name ?? "an object";
}
