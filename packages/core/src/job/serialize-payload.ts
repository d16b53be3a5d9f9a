import { PayloadError } from "../errors/config-errors";
import { unstorableText } from "../validation/names";
import { assertJsonValue } from "./json-value-check";
import { DEFAULT_MAX_PAYLOAD_BYTES, MAX_RESULT_BYTES } from "../limits";

/**
 * Serialises a payload to the JSON text that is stored, refusing anything
 * that would not come back exactly as given (see `assertJsonValue`):
 * `undefined`, functions, symbols, `BigInt`, `NaN`/`Infinity`, cycles,
 * `Map`, `Set`, `Date` (pass `toISOString()`), typed arrays and `Buffer`s,
 * boxed primitives, class instances, objects with `toJSON`, sparse arrays;
 * text PostgreSQL's `jsonb` cannot store unchanged (NUL characters,
 * unpaired surrogates, in values or keys); nesting deeper than
 * `MAX_PAYLOAD_DEPTH` (64); and payloads over `maxBytes` of UTF-8 JSON.
 * An object property whose value is `undefined` is left out, and `-0` is
 * stored as `0`, as JSON does. Throws `PayloadError` (with `path` naming the
 * refused value); nothing is inserted.
 *
 * @example
 * ```ts
 * serializePayload({ invoiceId: 812 });       // '{"invoiceId":812}'
 * serializePayload({ amount: 10n });          // throws PayloadError: … payload.amount is a bigint …
 * serializePayload({ tags: new Set(["a"]) }); // throws PayloadError: payload.tags: a Set cannot be stored as JSON; convert it to an array
 * serializePayload({ note: "x".repeat(2e6) }); // throws PayloadError: … more than the limit of 1048576 bytes
 * ```
 */
export function serializePayload(payload: unknown, maxBytes: number = DEFAULT_MAX_PAYLOAD_BYTES, queue?: string): string {
  assertJsonValue(payload);
  // Every value was checked above (its strings and keys are storable too): nothing left that could make this throw or change shape.
  const text = JSON.stringify(payload);
  assertPayloadSize(text, maxBytes, queue);
  return text;
}

/**
 * A `\u0000` escape, or an escaped surrogate half without its partner, that
 * is not itself escaped (an even run of backslashes, possibly none, before it).
 */
const UNSTORABLE_ESCAPE = new RegExp(
  [
    String.raw`(?:^|[^\\])(?:\\\\)*\\u0000`,
    String.raw`(?:^|[^\\])(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})`,
    String.raw`(?:^|[^\\])(?:\\\\)*(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}`,
  ].join("|"),
);

/**
 * Refuses JSON text that PostgreSQL's `jsonb` would reject or alter: a
 * `\u0000` escape (jsonb cannot hold NUL), an escaped or raw unpaired
 * surrogate. Throws `PayloadError`; the store runs it on every payload it
 * inserts, so a hand-built `NewJob` is held to the same rule.
 */
export function assertStorableJson(payloadJson: string, queue?: string): void {
  const problem = UNSTORABLE_ESCAPE.test(payloadJson)
    ? "contains a \\u0000 (NUL) or unpaired surrogate escape, which PostgreSQL jsonb cannot store"
    : unstorableText(payloadJson);
  if (problem !== undefined) {
    const of = queue === undefined ? "" : ` of queue ${JSON.stringify(queue)}`;
    throw new PayloadError(`payload${of} cannot be stored: its JSON ${problem}`);
  }
}

/**
 * Refuses payload JSON text longer than `maxBytes` bytes of UTF-8 with a
 * `PayloadError` that names the size, the limit and (given) the queue.
 * The store runs the same check on every path that
 * inserts, so a hand-built `NewJob` cannot slip past the cap either.
 *
 * @example
 * ```ts
 * assertPayloadSize('{"invoiceId":812}', 1_048_576);           // fine
 * assertPayloadSize(hugeJson, 1_048_576, "send-invoice");      // throws PayloadError
 * ```
 */
export function assertPayloadSize(payloadJson: string, maxBytes: number, queue?: string): void {
  // UTF-8 needs at most 3 bytes per UTF-16 unit: short texts need no count.
  if (payloadJson.length * 3 <= maxBytes) return;
  const bytes = Buffer.byteLength(payloadJson, "utf8");
  if (bytes > maxBytes) {
    const of = queue === undefined ? "" : ` of queue ${JSON.stringify(queue)}`;
    throw new PayloadError(`payload${of} is ${bytes} bytes of JSON, more than the limit of ${maxBytes} bytes`, {
      sizeBytes: bytes,
      limitBytes: maxBytes,
    });
  }
}

/**
 * Serialises a handler's return value for the `result` column with plain
 * `JSON.stringify` rules (a `Date` becomes its ISO string, `toJSON` is
 * honoured; results are read by people, not parsed back into values):
 * `undefined` becomes `null`; a value JSON cannot carry, text jsonb cannot
 * store or a result over 1 MiB is replaced by a note saying so rather than
 * failing a job that did its work.
 *
 * @example
 * ```ts
 * serializeResult({ sentAt: new Date(0) }); // '{"sentAt":"1970-01-01T00:00:00.000Z"}'
 * serializeResult({ big: 1n });             // '{"unserialisableResult":"…"}'
 * ```
 */
export function serializeResult(result: unknown): string | null {
  if (result === undefined) return null;
  try {
    const text: unknown = JSON.stringify(result);
    if (typeof text !== "string") throw new PayloadError(`result is a ${typeof result}, which JSON cannot carry`);
    assertStorableJson(text);
    assertPayloadSize(text, MAX_RESULT_BYTES);
    return text;
  } catch (error) {
    return JSON.stringify({ unserialisableResult: (error as Error).message });
  }
}
