import { expect } from "chai";
import fc from "fast-check";
import { ErrorCode, hasErrorCode } from "@stint/core";
import { ndjsonLines, type NdjsonLine } from "../../src/input/ndjson-lines";

async function collect(chunks: readonly Buffer[], maxLineBytes: number): Promise<NdjsonLine[]> {
  const lines: NdjsonLine[] = [];
  for await (const line of ndjsonLines(chunks, maxLineBytes)) lines.push(line);
  return lines;
}

function chunked(bytes: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let start = 0; start < bytes.length; start += size) chunks.push(bytes.subarray(start, start + size));
  return chunks;
}

describe("ndjsonLines", () => {
  it("yields every non-blank line with its number, however the bytes are cut (property)", async () => {
    const lineText = fc.string({ unit: "grapheme", maxLength: 12 }).filter((text) => !/[\n\r]/.test(text));
    await fc.assert(
      fc.asyncProperty(fc.array(lineText, { maxLength: 10 }), fc.integer({ min: 1, max: 9 }), fc.boolean(), async (texts, size, crlf) => {
        const bytes = Buffer.from(texts.join(crlf ? "\r\n" : "\n"), "utf8");
        const expected = texts.map((text, index) => ({ line: index + 1, text })).filter(({ text }) => text.trim() !== "");
        expect(await collect(chunked(bytes, size), 1_000)).to.deep.equal(expected);
      }),
    );
  });

  it("accepts a line of exactly the limit and refuses one byte more, naming the line", async () => {
    const limit = 10;
    expect(await collect([Buffer.from(`a\n${"é".repeat(5)}\n`)], limit)).to.deep.equal([
      { line: 1, text: "a" },
      { line: 2, text: "é".repeat(5) },
    ]);
    let refused: unknown;
    try {
      await collect(chunked(Buffer.from(`a\n\n${"x".repeat(11)}`), 3), limit);
    } catch (thrown) {
      refused = thrown;
    }
    expect(hasErrorCode(refused, ErrorCode.Payload)).to.equal(true);
    expect((refused as Error).message).to.match(/^line 3 is longer than 10 bytes, the limit for one NDJSON line/);
  });

  it("drops a byte order mark before the first line only", async () => {
    const lines = await collect([Buffer.from("\uFEFF1\n\uFEFF2\n", "utf8")], 100);
    expect(lines).to.deep.equal([
      { line: 1, text: "1" },
      { line: 2, text: "\uFEFF2" },
    ]);
  });
});
