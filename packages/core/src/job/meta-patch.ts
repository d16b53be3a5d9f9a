import { ConfigError, PayloadError } from "../errors/config-errors";
import { MAX_META_BYTES } from "../limits";
import type { JsonObject } from "./json-types";
import { serializeMeta } from "./job-meta";
import { assertStorableJson } from "./serialize-payload";

/** Keys of `meta` that stint writes itself (trace context): a handler's patch may not set them. */
function isReservedMetaKey(key: string): boolean {
  return key.startsWith("stint.") || key === "traceparent" || key === "tracestate";
}

/**
 * Serialises a `ctx.updateMeta` patch: a plain object of JSON values (see
 * `serializeMeta`) whose keys are not stint's own (`stint.*`,
 * `traceparent`, `tracestate`). `undefined` values are left out, as JSON
 * leaves them. Throws `PayloadError` (not JSON) or `ConfigError` (a
 * reserved key).
 *
 * @example
 * ```ts
 * serializeMetaPatch({ step: "uploaded" }); // '{"step":"uploaded"}'
 * serializeMetaPatch({ traceparent: "x" }); // throws ConfigError
 * ```
 */
export function serializeMetaPatch(patch: unknown): string {
  if (patch === undefined || patch === null) throw new PayloadError("meta patch must be a plain object of JSON values", { path: "meta" });
  const text = serializeMeta(patch) ?? "{}";
  for (const key of Object.keys(patch)) {
    if (isReservedMetaKey(key))
      throw new ConfigError("meta", `key ${JSON.stringify(key)} belongs to stint (keys starting with "stint.", traceparent, tracestate)`);
  }
  return text;
}

/**
 * The JSON text of `current` meta (`null`: none) with `patchJson`'s keys
 * set (a shallow merge: a patched key replaces the whole value). Throws
 * `PayloadError` naming both sizes when the result is over
 * `MAX_META_BYTES`. Stores and `ctx.updateMeta` merge the same way.
 *
 * @example
 * ```ts
 * mergeMetaPatch('{"tenant":"acme"}', '{"step":"uploaded"}'); // '{"tenant":"acme","step":"uploaded"}'
 * ```
 */
export function mergeMetaPatch(currentJson: string | null, patchJson: string): string {
  const current = currentJson === null ? {} : (JSON.parse(currentJson) as JsonObject);
  const patch = JSON.parse(patchJson) as JsonObject;
  if (typeof patch !== "object" || patch === null || Array.isArray(patch))
    throw new PayloadError("meta patch must be the JSON text of an object", { path: "meta" });
  const merged = JSON.stringify({ ...current, ...patch });
  assertStorableJson(merged);
  const size = Buffer.byteLength(merged, "utf8");
  if (size > MAX_META_BYTES) {
    throw new PayloadError(`meta would be ${size} bytes of JSON after the update, more than the limit of ${MAX_META_BYTES} bytes (MAX_META_BYTES)`, {
      sizeBytes: size,
      limitBytes: MAX_META_BYTES,
      path: "meta",
    });
  }
  return merged;
}
