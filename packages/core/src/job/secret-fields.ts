import { ConfigError } from "../errors/config-errors";
import type { LogFields, Logger } from "../logging/logger";

/** What a secret is replaced with in logs, `last_error` and {@link redact}'s output. */
export const REDACTED = "[redacted]";

const PATH_SEGMENT = /^(?:\*|[^.*]+)$/;

/**
 * Validates the `secretFields` of a job kind: dotted paths into the payload
 * such as `"apiKey"` or `"card.number"`. A `*` segment matches every key of
 * an object; arrays are looked into element by element without naming an
 * index (`"cards.number"` covers `cards[0].number`, `cards[1].number`, …).
 * Returns the paths frozen; throws `ConfigError("secretFields")`.
 */
export function resolveSecretFields(input: unknown): readonly string[] {
  if (input === undefined) return Object.freeze([]);
  if (!Array.isArray(input) || input.length > 100) {
    throw new ConfigError("secretFields", 'must be an array of at most 100 dotted paths such as "card.number"');
  }
  for (const path of input) {
    if (typeof path !== "string" || path.length === 0 || path.length > 200 || !path.split(".").every((segment) => PATH_SEGMENT.test(segment))) {
      throw new ConfigError("secretFields", `each path must be dotted field names or *, such as "card.number", got ${JSON.stringify(path)}`);
    }
  }
  return Object.freeze([...new Set(input as string[])]);
}

/**
 * The texts to keep out of logs and `last_error` for one payload: every
 * string and number found at `paths` (all of them below a path that names
 * an object or array; booleans are not secrets), each as it is and as it
 * appears inside JSON text (quotes, backslashes and control characters
 * escaped), longest first.
 *
 * @example
 * ```ts
 * secretValuesOf({ card: { number: "4242 4242", cvc: 123 } }, ["card"]); // ["4242 4242", "123"]
 * ```
 */
export function secretValuesOf(payload: unknown, paths: readonly string[]): readonly string[] {
  if (paths.length === 0) return [];
  const found = new Set<string>();
  for (const path of paths) {
    for (const value of valuesAt(payload, path.split("."))) collectLeaves(value, found, 0);
  }
  const texts = new Set<string>();
  for (const text of found) {
    if (text.length === 0) continue;
    texts.add(text);
    texts.add(JSON.stringify(text).slice(1, -1));
  }
  return Object.freeze([...texts].sort((a, b) => b.length - a.length));
}

/**
 * Replaces every occurrence of each secret in `text` with `[redacted]`, in
 * one left-to-right pass that prefers the longest secret at each position
 * (so a replacement is never rescanned).
 *
 * @example
 * ```ts
 * redactText("card 4242 declined", ["4242"]); // "card [redacted] declined"
 * ```
 */
export function redactText(text: string, secrets: readonly string[]): string {
  return compileRedaction(secrets)(text);
}

/**
 * A copy of `payload` with the fields at `paths` replaced by `"[redacted]"`
 * (the same paths as a job kind's `secretFields`), for logging or showing a
 * payload yourself. The payload itself is not changed.
 *
 * @example
 * ```ts
 * redact({ to: "a@example.com", card: { number: "4242" } }, ["card.number"]);
 * // { to: "a@example.com", card: { number: "[redacted]" } }
 * ```
 */
export function redact<T>(payload: T, paths: readonly string[]): T {
  const checked = resolveSecretFields(paths);
  let copy = structuredCopy(payload);
  for (const path of checked) copy = replaceAt(copy, path.split("."));
  return copy as T;
}

/**
 * Wraps a logger so that each secret is replaced with `[redacted]` in every
 * message and in every string of the fields (its children too). With no
 * secrets it returns `log` itself.
 *
 * @example
 * ```ts
 * const jobLog = redactingLogger(log.child({ jobId }), secretValuesOf(job.payload, SendInvoice.secretFields));
 * ```
 */
export function redactingLogger(log: Logger, secrets: readonly string[]): Logger {
  if (secrets.length === 0) return log;
  return wrapLogger(log, compileRedaction(secrets));
}

/**
 * A function that redacts `secrets` from a text, compiled once; the
 * identity function when there are none.
 */
export function compileRedaction(secrets: readonly string[]): (text: string) => string {
  const texts = [...new Set(secrets.filter((secret) => typeof secret === "string" && secret.length > 0))].sort((a, b) => b.length - a.length);
  if (texts.length === 0) return (text) => text;
  const pattern = new RegExp(texts.map(escapeRegExp).join("|"), "g");
  return (text) => text.replace(pattern, REDACTED);
}

function wrapLogger(log: Logger, scrub: (text: string) => string): Logger {
  const fieldsOf = (fields: LogFields | undefined): LogFields | undefined => (fields === undefined ? undefined : (redactValue(fields, scrub, 0) as LogFields));
  return {
    error: (message, fields) => log.error(scrub(String(message)), fieldsOf(fields)),
    warn: (message, fields) => log.warn(scrub(String(message)), fieldsOf(fields)),
    info: (message, fields) => log.info(scrub(String(message)), fieldsOf(fields)),
    debug: (message, fields) => log.debug(scrub(String(message)), fieldsOf(fields)),
    child: (fields) => wrapLogger(log.child(fieldsOf(fields) ?? {}), scrub),
    ...(log.isLevelEnabled === undefined ? {} : { isLevelEnabled: (level) => log.isLevelEnabled!(level) }),
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const MAX_DEPTH = 32;

function* valuesAt(value: unknown, segments: readonly string[]): Generator {
  if (Array.isArray(value)) {
    for (const item of value) yield* valuesAt(item, segments);
    return;
  }
  if (segments.length === 0) {
    yield value;
    return;
  }
  if (typeof value !== "object" || value === null) return;
  const [head, ...rest] = segments as [string, ...string[]];
  const record = value as Record<string, unknown>;
  if (head === "*") {
    for (const key of Object.keys(record)) yield* valuesAt(record[key], rest);
  } else if (Object.prototype.hasOwnProperty.call(record, head)) {
    yield* valuesAt(record[head], rest);
  }
}

function collectLeaves(value: unknown, into: Set<string>, depth: number): void {
  if (typeof value === "string") into.add(value);
  else if (typeof value === "number" || typeof value === "bigint") into.add(String(value));
  else if (typeof value === "object" && value !== null && depth < MAX_DEPTH) {
    for (const item of Array.isArray(value) ? value : Object.values(value)) collectLeaves(item, into, depth + 1);
  }
}

function replaceAt(value: unknown, segments: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => replaceAt(item, segments));
  if (segments.length === 0) return value === undefined || value === null ? value : REDACTED;
  if (typeof value !== "object" || value === null || !isPlainObject(value)) return value;
  const [head, ...rest] = segments as [string, ...string[]];
  const record = value as Record<string, unknown>;
  for (const key of head === "*" ? Object.keys(record) : [head]) {
    if (Object.prototype.hasOwnProperty.call(record, key)) setOwn(record, key, replaceAt(record[key], rest));
  }
  return record;
}

function redactValue(value: unknown, scrub: (text: string) => string, depth: number): unknown {
  if (typeof value === "string") return scrub(value);
  if (typeof value === "number" || typeof value === "bigint") {
    const text = String(value);
    return scrub(text) === text ? value : REDACTED;
  }
  if (value instanceof Error) return scrub(value.stack ?? `${value.name}: ${value.message}`);
  if (typeof value !== "object" || value === null || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, scrub, depth + 1));
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) setOwn(copy, key, redactValue(item, scrub, depth + 1));
  return copy;
}

/**
 * `record[key] = value` as an own property even for `__proto__` (a key
 * `JSON.parse` creates), which plain assignment would turn into a
 * prototype change.
 */
function setOwn(record: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** A deep copy of plain JSON-like data (objects, arrays, primitives); other objects are kept as they are. */
function structuredCopy(value: unknown, depth = 0): unknown {
  if (typeof value !== "object" || value === null || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => structuredCopy(item, depth + 1));
  if (!isPlainObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) setOwn(copy, key, structuredCopy(item, depth + 1));
  return copy;
}
