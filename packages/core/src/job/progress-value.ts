import { PayloadError } from "../errors/config-errors";
import { assertJsonValue } from "./json-value-check";
import { assertPayloadSize } from "./serialize-payload";
import { MAX_PROGRESS_BYTES } from "../limits";

/**
 * Serialises a `ctx.progress` value to JSON text: a JSON value (see
 * `assertJsonValue`; a finite number, a string, a small object …) of at
 * most {@link MAX_PROGRESS_BYTES}. Throws `PayloadError` naming `progress`.
 *
 * @example
 * ```ts
 * serializeProgress(0.4);                  // "0.4"
 * serializeProgress({ done: 40, of: 100 }); // '{"done":40,"of":100}'
 * serializeProgress(NaN);                  // throws PayloadError: progress is NaN …
 * ```
 */
export function serializeProgress(value: unknown): string {
  assertJsonValue(value, "progress");
  const text = JSON.stringify(value);
  try {
    assertPayloadSize(text, MAX_PROGRESS_BYTES);
  } catch (error) {
    const size = (error as PayloadError).sizeBytes;
    throw new PayloadError(`progress is ${size} bytes of JSON, more than the limit of ${MAX_PROGRESS_BYTES} bytes (MAX_PROGRESS_BYTES)`, {
      sizeBytes: size,
      limitBytes: MAX_PROGRESS_BYTES,
      path: "progress",
    });
  }
  return text;
}
