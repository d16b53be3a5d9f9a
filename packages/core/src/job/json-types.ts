/**
 * A value JSON carries unchanged: what `meta` and `ctx.progress` store.
 *
 * @example
 * ```ts
 * const progress: JsonValue = { done: 40, of: 100 };
 * ```
 */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | JsonObject;

/**
 * A JSON object, read-only: a job's `meta` as a handler sees it (`ctx.meta`).
 *
 * @example
 * ```ts
 * const meta: JsonObject = { tenant: "acme", requestId: "r-81" };
 * ```
 */
export interface JsonObject {
  readonly [key: string]: JsonValue;
}
