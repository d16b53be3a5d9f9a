import { PayloadError } from "../errors/config-errors";
import { unstorableText } from "../validation/names";

/** Largest payload stint stores unless told otherwise: 1 MiB of JSON text. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1_048_576;

/**
 * Serialises a payload to the JSON text that is stored, refusing what JSON
 * cannot carry (`undefined`, functions, symbols, `BigInt`, cycles, values
 * that would silently become `null` such as `NaN`), text that PostgreSQL's
 * `jsonb` cannot store unchanged (NUL characters, unpaired surrogates, in
 * values or keys) and payloads over `maxBytes` of UTF-8 JSON. Throws
 * `PayloadError`; nothing is inserted.
 *
 * @example
 * ```ts
 * serializePayload({ invoiceId: 812 });       // '{"invoiceId":812}'
 * serializePayload({ amount: 10n });          // throws PayloadError
 * serializePayload({ note: "x".repeat(2e6) }); // throws PayloadError: … more than the limit of 1048576 bytes
 * ```
 */
export function serializePayload(payload: unknown, maxBytes: number = DEFAULT_MAX_PAYLOAD_BYTES, queue?: string): string {
  assertJsonValue(payload, "payload", new Set());
  let text: string;
  try {
    text = JSON.stringify(payload);
  } catch (error) {
    throw new PayloadError(`payload is not JSON-serialisable: ${(error as Error).message}`, { cause: error });
  }
  assertStorableJson(text, queue);
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
    ? "contains a \\u0000 or unpaired surrogate escape, which PostgreSQL jsonb cannot store"
    : unstorableText(payloadJson);
  if (problem !== undefined) {
    const of = queue === undefined ? "" : ` of queue ${JSON.stringify(queue)}`;
    throw new PayloadError(`payload${of} cannot be stored: its JSON ${problem}`);
  }
}

/**
 * Refuses payload JSON text longer than `maxBytes` bytes of UTF-8 with a
 * `PayloadError` that names the size, the limit and (given) the queue.
 * Returns the size. The store runs the same check on every path that
 * inserts, so a hand-built `NewJob` cannot slip past the cap either.
 *
 * @example
 * ```ts
 * assertPayloadSize('{"invoiceId":812}', 1_048_576);           // 17
 * assertPayloadSize(hugeJson, 1_048_576, "send-invoice");      // throws PayloadError
 * ```
 */
export function assertPayloadSize(payloadJson: string, maxBytes: number, queue?: string): number {
  // UTF-8 needs at most 3 bytes per UTF-16 unit: short texts need no count.
  if (payloadJson.length * 3 <= maxBytes) return Buffer.byteLength(payloadJson, "utf8");
  const bytes = Buffer.byteLength(payloadJson, "utf8");
  if (bytes > maxBytes) {
    const of = queue === undefined ? "" : ` of queue ${JSON.stringify(queue)}`;
    throw new PayloadError(`payload${of} is ${bytes} bytes of JSON, more than the limit of ${maxBytes} bytes`, {
      sizeBytes: bytes,
      limitBytes: maxBytes,
    });
  }
  return bytes;
}

function assertJsonValue(value: unknown, path: string, seen: Set<object>): void {
  switch (typeof value) {
    case "string":
      assertStorableString(value, path);
      return;
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(value)) throw new PayloadError(`payload is not JSON-serialisable: ${path} is ${value}`);
      return;
    case "object":
      break;
    case "undefined":
      throw new PayloadError(`payload is not JSON-serialisable: ${path} is undefined`);
    default:
      throw new PayloadError(`payload is not JSON-serialisable: ${path} is a ${typeof value}`);
  }
  if (value === null) return;
  if (seen.has(value)) throw new PayloadError(`payload is not JSON-serialisable: ${path} is a circular reference`);
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return;
  seen.add(value);
  if (Array.isArray(value)) {
    value.forEach((item, index) => assertJsonValue(item, `${path}[${index}]`, seen));
  } else {
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      assertStorableString(key, `a key of ${path}`);
      assertJsonValue(item, `${path}.${key}`, seen);
    }
  }
  seen.delete(value);
}

function assertStorableString(text: string, path: string): void {
  const problem = unstorableText(text);
  if (problem !== undefined) throw new PayloadError(`payload cannot be stored: ${path} ${problem}`);
}

/**
 * Serialises a handler's return value for the `result` column: `undefined`
 * becomes `null`; a value JSON cannot carry is replaced by a note saying so
 * rather than failing a job that did its work.
 */
export function serializeResult(result: unknown): string | null {
  if (result === undefined) return null;
  try {
    return serializePayload(result);
  } catch (error) {
    return JSON.stringify({ unserialisableResult: (error as Error).message });
  }
}
