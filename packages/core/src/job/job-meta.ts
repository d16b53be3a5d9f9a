import { PayloadError } from "../errors/config-errors";
import { assertJsonValue } from "./json-value-check";
import type { JsonObject } from "./json-types";
import { assertPayloadSize, assertStorableJson } from "./serialize-payload";
import { MAX_META_BYTES } from "../limits";

/** The `meta` a job without one reads as: an empty, frozen object. */
export const EMPTY_META: JsonObject = Object.freeze({});

/**
 * Serialises a job's `meta` (see `EnqueueOptions.meta`) to the JSON text the
 * store keeps, or `null` for none (left out or empty: nothing is stored).
 * It must be a plain object of JSON values, held to the payload's rules
 * (see `assertJsonValue`); throws `PayloadError` naming `meta` (and the
 * refused value's path). Its size, at most `MAX_META_BYTES` of JSON, is
 * checked by the store the job is handed to (see `assertStorableMeta`).
 *
 * Keys starting with `stint.` and the key `traceparent` (with `tracestate`)
 * may be written by stint itself (trace context carried from enqueue to the
 * handler): give your own keys other names.
 *
 * @example
 * ```ts
 * serializeMeta({ tenant: "acme" });  // '{"tenant":"acme"}'
 * serializeMeta(undefined);           // null
 * serializeMeta(["a"]);               // throws PayloadError: meta must be a plain object of JSON values, got an array
 * ```
 */
export function serializeMeta(meta: unknown): string | null {
  if (meta === undefined || meta === null) return null;
  if (typeof meta !== "object" || Array.isArray(meta)) {
    throw new PayloadError(`meta must be a plain object of JSON values, got ${Array.isArray(meta) ? "an array" : typeof meta}`, { path: "meta" });
  }
  assertJsonValue(meta, "meta");
  const text = JSON.stringify(meta);
  return text === "{}" ? null : text;
}

/**
 * Refuses `meta` JSON text that is not an object, that `jsonb` cannot store
 * or that is over {@link MAX_META_BYTES}: the store runs it on every job it
 * inserts, so a hand-built `NewJob` is held to the same rules.
 */
export function assertStorableMeta(metaJson: string, queue?: string): void {
  if (!metaJson.startsWith("{")) throw new PayloadError("meta must be the JSON text of an object", { path: "meta" });
  try {
    assertStorableJson(metaJson, queue);
    assertPayloadSize(metaJson, MAX_META_BYTES, queue);
  } catch (error) {
    const refused = error as PayloadError;
    throw new PayloadError(refused.message.replace(/^payload/, "meta").replace(/of JSON, more than/, "of JSON (meta), more than"), {
      cause: error,
      sizeBytes: refused.sizeBytes,
      limitBytes: refused.limitBytes,
      path: "meta",
    });
  }
}
