import { PayloadError } from "../errors/config-errors";

/** Largest payload stint stores unless told otherwise: 1 MiB of JSON text. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1_048_576;

/**
 * Serialises a payload to the JSON text that is stored, refusing what JSON
 * cannot carry (`undefined`, functions, symbols, `BigInt`, cycles, values
 * that would silently become `null` such as `NaN`) and payloads over
 * `maxBytes`. Throws `PayloadError`; nothing is inserted.
 *
 * @example
 * ```ts
 * serializePayload({ invoiceId: 812 });       // '{"invoiceId":812}'
 * serializePayload({ amount: 10n });          // throws PayloadError
 * ```
 */
export function serializePayload(payload: unknown, maxBytes: number = DEFAULT_MAX_PAYLOAD_BYTES): string {
  assertJsonValue(payload, "payload", new Set());
  let text: string;
  try {
    text = JSON.stringify(payload);
  } catch (error) {
    throw new PayloadError(`payload is not JSON-serialisable: ${(error as Error).message}`, { cause: error });
  }
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > maxBytes) {
    throw new PayloadError(`payload is ${bytes} bytes of JSON, more than the limit of ${maxBytes} bytes`);
  }
  return text;
}

function assertJsonValue(value: unknown, path: string, seen: Set<object>): void {
  switch (typeof value) {
    case "string":
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
      assertJsonValue(item, `${path}.${key}`, seen);
    }
  }
  seen.delete(value);
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
