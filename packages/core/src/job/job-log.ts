import { PayloadError } from "../errors/config-errors";
import { MAX_JOB_LOG_BYTES, MAX_JOB_LOG_LINES, MAX_LOG_FIELDS_BYTES, MAX_LOG_MESSAGE_LENGTH } from "../limits";
import { assertJsonValue } from "./json-value-check";
import type { JsonObject } from "./json-types";
import { assertStorableJson } from "./serialize-payload";

/** One line a handler wrote with `ctx.log(message, fields)`. */
export interface JobLogLine {
  /** When the handler wrote it (the worker's clock). */
  readonly at: Date;
  readonly message: string;
  /** The small JSON object given with it, or `null`. */
  readonly fields: JsonObject | null;
}

/**
 * The `ctx.log` lines one attempt kept, newest last. At most
 * `MAX_JOB_LOG_LINES` lines and `MAX_JOB_LOG_BYTES` of JSON are kept; past
 * that the oldest go, and `droppedLines` says how many.
 *
 * @example
 * ```ts
 * for (const log of await store.listJobLogs({ jobId: "812" })) {
 *   if (log.droppedLines > 0) console.log(`… ${log.droppedLines} earlier lines dropped`);
 *   for (const line of log.lines) console.log(log.attempt, line.at.toISOString(), line.message);
 * }
 * ```
 */
export interface JobLogRecord {
  readonly jobId: string;
  /** The attempt's number (an attempt given back without spending it shares its number, and its log, with the next one). */
  readonly attempt: number;
  readonly lines: readonly JobLogLine[];
  readonly droppedLines: number;
}

/**
 * Serialises one `ctx.log` line to the JSON text a store keeps:
 * `{"at":…,"message":…,"fields":…}`. A message longer than
 * `MAX_LOG_MESSAGE_LENGTH` is cut with a marker; `fields` must be a plain
 * object of JSON values of at most `MAX_LOG_FIELDS_BYTES`, or a
 * `PayloadError` says why not.
 *
 * @example
 * ```ts
 * serializeLogLine("Uploaded", { files: 3 }, new Date(0));
 * // '{"at":"1970-01-01T00:00:00.000Z","message":"Uploaded","fields":{"files":3}}'
 * ```
 */
export function serializeLogLine(message: unknown, fields: unknown, at: Date): string {
  const text = typeof message === "string" ? message : String(message);
  const cut =
    text.length > MAX_LOG_MESSAGE_LENGTH ? `${text.slice(0, MAX_LOG_MESSAGE_LENGTH)}… (${text.length - MAX_LOG_MESSAGE_LENGTH} more characters cut)` : text;
  const line: { at: string; message: string; fields?: unknown } = { at: at.toISOString(), message: cut };
  if (fields !== undefined && fields !== null) {
    if (typeof fields !== "object" || Array.isArray(fields)) {
      throw new PayloadError(`log fields must be a plain object of JSON values, got ${Array.isArray(fields) ? "an array" : typeof fields}`, {
        path: "fields",
      });
    }
    assertJsonValue(fields, "fields");
    const fieldsJson = JSON.stringify(fields);
    const size = utf8Bytes(fieldsJson);
    if (size > MAX_LOG_FIELDS_BYTES) {
      throw new PayloadError(`log fields are ${size} bytes of JSON, more than the limit of ${MAX_LOG_FIELDS_BYTES} bytes (MAX_LOG_FIELDS_BYTES)`, {
        sizeBytes: size,
        limitBytes: MAX_LOG_FIELDS_BYTES,
        path: "fields",
      });
    }
    line.fields = fields;
  }
  const json = JSON.stringify(line);
  assertStorableJson(json);
  return json;
}

/**
 * The newest of `lines` (JSON texts, oldest first) that fit in
 * `MAX_JOB_LOG_LINES` lines and `MAX_JOB_LOG_BYTES` bytes, and how many
 * were dropped in all (`dropped` earlier ones included). Stores and the
 * worker's buffer trim the same way.
 *
 * @example
 * ```ts
 * const { kept, dropped } = keepNewestLogLines([...stored, ...appended], droppedBefore);
 * ```
 */
export function keepNewestLogLines(lines: readonly string[], dropped = 0): { readonly kept: readonly string[]; readonly dropped: number } {
  let bytes = 0;
  let first = lines.length;
  while (first > 0 && lines.length - first < MAX_JOB_LOG_LINES) {
    const size = utf8Bytes(lines[first - 1] as string);
    if (bytes + size > MAX_JOB_LOG_BYTES) break;
    bytes += size;
    first -= 1;
  }
  return { kept: first === 0 ? lines : lines.slice(first), dropped: dropped + first };
}

/**
 * Reads a stored line back (see {@link serializeLogLine}); a line that is
 * not of that shape reads as its JSON text, so a hand-written row still shows.
 */
export function parseLogLine(value: unknown): JobLogLine {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const { at, message, fields } = value as { at?: unknown; message?: unknown; fields?: unknown };
    const time = typeof at === "string" ? new Date(at) : new Date(Number.NaN);
    if (typeof message === "string" && !Number.isNaN(time.getTime())) {
      const own = typeof fields === "object" && fields !== null && !Array.isArray(fields) ? Object.freeze(fields as JsonObject) : null;
      return Object.freeze({ at: time, message, fields: own });
    }
  }
  return Object.freeze({ at: new Date(0), message: JSON.stringify(value) ?? String(value), fields: null });
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
