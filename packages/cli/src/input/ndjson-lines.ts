import { TextDecoder } from "node:util";
import { PayloadError } from "@stint/core";

/**
 * Bytes an NDJSON line may have beyond the payload limit (spaces, escapes
 * such as `\u00e9` that take more room in the file than in the stored JSON):
 * 64 KiB.
 */
export const NDJSON_LINE_SLACK_BYTES = 65_536;

/** One non-blank line of NDJSON input with its 1-based line number. */
export interface NdjsonLine {
  readonly line: number;
  readonly text: string;
}

/**
 * Splits a byte stream into its non-blank lines (`\n` or `\r\n`), holding
 * at most `maxLineBytes` of one line (plus the chunk being read) in memory:
 * a longer line, such as the endless one of `/dev/zero`, is refused with a
 * `PayloadError` that names the line and the limit as soon as it passes
 * the limit. Each line must be valid UTF-8 (a `PayloadError` otherwise:
 * bytes are never replaced silently); a UTF-8 byte order mark before the
 * first line is dropped.
 *
 * @example
 * ```ts
 * for await (const { line, text } of ndjsonLines(createReadStream(path), 1_114_112)) {
 *   JSON.parse(text);
 * }
 * ```
 */
export async function* ndjsonLines(
  input: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  maxLineBytes: number,
): AsyncGenerator<NdjsonLine> {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  let parts: Buffer[] = [];
  let size = 0;
  let line = 0;
  for await (const data of input) {
    const chunk = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start);
      const end = newline === -1 ? chunk.length : newline;
      size += end - start;
      if (size > maxLineBytes) throw tooLong(line + 1, maxLineBytes);
      parts.push(chunk.subarray(start, end));
      if (newline === -1) break;
      line += 1;
      const text = decodeLine(decoder, parts, line);
      if (text.trim() !== "") yield { line, text };
      parts = [];
      size = 0;
      start = newline + 1;
    }
  }
  if (size > 0) {
    const text = decodeLine(decoder, parts, line + 1);
    if (text.trim() !== "") yield { line: line + 1, text };
  }
}

function decodeLine(decoder: TextDecoder, parts: readonly Buffer[], line: number): string {
  let text: string;
  try {
    text = decoder.decode(Buffer.concat(parts));
  } catch (thrown) {
    throw new PayloadError(`line ${line} is not valid UTF-8 text`, { cause: thrown });
  }
  if (line === 1 && text.startsWith("\uFEFF")) text = text.slice(1);
  return text.endsWith("\r") ? text.slice(0, -1) : text;
}

function tooLong(line: number, maxLineBytes: number): PayloadError {
  return new PayloadError(
    `line ${line} is longer than ${maxLineBytes} bytes, the limit for one NDJSON line (the queue's payload limit plus ${NDJSON_LINE_SLACK_BYTES} bytes)`,
    { limitBytes: maxLineBytes },
  );
}
