import { Readable } from "node:stream";
import { TextDecoder } from "node:util";
import { expect } from "chai";
import fc from "fast-check";
import { defineJob, ErrorCode, hasErrorCode, JobClient } from "@stint/core";
import { serializePayload } from "@stint/core/driver";
import { ExitCode } from "../../src/index";
import { useSchemaAndDir } from "../helpers/schema-and-dir";
import { stint } from "../helpers/run-stint";

/** Anything JavaScript can hand to enqueue: Maps, Sets, Dates, typed arrays, boxed and sparse values, odd strings. */
const anyValue = fc.anything({
  maxDepth: 3,
  withMap: true,
  withSet: true,
  withDate: true,
  withTypedArray: true,
  withBoxedValues: true,
  withSparseArray: true,
  withNullPrototype: true,
  withBigInt: true,
  stringUnit: "binary",
});

/** Nesting around the depth limit (two levels a step: 56 to 72), which must be refused or stored, never overflow. */
const deepValue = fc.integer({ min: 28, max: 36 }).map((depth) => {
  let value: unknown = "leaf";
  for (let level = 0; level < depth; level += 1) value = { [`k${level}`]: [value] };
  return value;
});

/** Mostly anything (mostly refused), plus plain JSON values (mostly accepted) and deep nesting. */
const payload = fc.oneof(
  { weight: 3, arbitrary: anyValue },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3, stringUnit: "grapheme" }) },
  { weight: 1, arbitrary: deepValue },
);

const jsonBytes = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), "utf8");

/** An NDJSON line: JSON text of a value (valid or not for stint), arbitrary bytes, or blank. */
const ndjsonLine = fc.oneof(
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3, stringUnit: "grapheme" }).map(jsonBytes) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3, stringUnit: "binary" }).map(jsonBytes) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 24 }).map((bytes) => Buffer.from(bytes)) },
  { weight: 1, arbitrary: fc.constantFrom(Buffer.from(""), Buffer.from("  \r")) },
);

/** What a payload reads back as when stint accepts it: its JSON (see serializePayload). */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** The payloads of a file's non-blank lines, in order; `undefined` when a line is not UTF-8 JSON. */
function parsedLines(input: Buffer): unknown[] | undefined {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const payloads: unknown[] = [];
  for (let start = 0, line = 1; start <= input.length; line += 1) {
    const newline = input.indexOf(10, start);
    const end = newline === -1 ? input.length : newline;
    let text: string;
    try {
      text = decoder.decode(input.subarray(start, end)).replace(/\r$/, "");
      if (line === 1) text = text.replace(/^\uFEFF/, "");
      if (text.trim() !== "") payloads.push(JSON.parse(text));
    } catch {
      return undefined;
    }
    start = end + 1;
  }
  return payloads;
}

const refusedByCore = (value: unknown): boolean => {
  try {
    serializePayload(value);
    return false;
  } catch {
    return true;
  }
};

describe("enqueue round trip (property, real PostgreSQL)", () => {
  const scene = useSchemaAndDir();
  let queueNumber = 0;
  const nextKind = () => defineJob<unknown>(`roundtrip-${(queueNumber += 1)}`);
  const storedPayloads = async (queue: string): Promise<unknown[]> =>
    (await scene.test.store.listJobs({ queue, limit: 1_000 })).map((job) => job.payload).reverse();
  const isPayloadRefusal = (thrown: unknown): boolean => hasErrorCode(thrown, ErrorCode.Payload);

  it("JobClient.enqueue stores a value exactly or refuses it with a PayloadError, storing nothing", async () => {
    const client = new JobClient(scene.test.store);
    await fc.assert(
      fc.asyncProperty(payload, async (value) => {
        const kind = nextKind();
        const accepted = await client.enqueue(kind, value).then(
          () => true,
          (thrown: unknown) => {
            expect(isPayloadRefusal(thrown), String(thrown)).to.equal(true);
            return false;
          },
        );
        expect(await storedPayloads(kind.name)).to.deep.equal(accepted ? [asJson(value)] : []);
      }),
      { numRuns: 60 },
    );
  });

  it("JobClient.enqueueMany stores every value exactly, or none when one is refused", async () => {
    const client = new JobClient(scene.test.store);
    await fc.assert(
      fc.asyncProperty(fc.array(payload, { minLength: 1, maxLength: 5 }), async (values) => {
        const kind = nextKind();
        const accepted = await client
          .enqueueMany(
            kind,
            values.map((value) => ({ payload: value })),
          )
          .then(
            (results) => {
              expect(results).to.have.length(values.length);
              return true;
            },
            (thrown: unknown) => {
              expect(isPayloadRefusal(thrown), String(thrown)).to.equal(true);
              return false;
            },
          );
        expect(await storedPayloads(kind.name)).to.deep.equal(accepted ? values.map(asJson) : []);
      }),
      { numRuns: 40 },
    );
  });

  it("stint enqueue --file - enqueues exactly the lines of a valid file, or nothing with exit 2", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(ndjsonLine, { maxLength: 8 }), fc.integer({ min: 1, max: 64 }), async (lines, chunkBytes) => {
        const kind = nextKind();
        const input = Buffer.concat(lines.flatMap((line, index) => (index === 0 ? [line] : [Buffer.from("\n"), line])));
        const chunks: Buffer[] = [];
        for (let start = 0; start < input.length; start += chunkBytes) chunks.push(input.subarray(start, start + chunkBytes));
        const result = await stint(["enqueue", kind.name, "--file", "-", "--force", "--schema", scene.test.schema], { stdin: Readable.from(chunks) });
        const stored = await storedPayloads(kind.name);
        const expected = parsedLines(input);
        if (result.code === ExitCode.Ok) {
          expect(expected, "accepted a file with a line that is not UTF-8 JSON").not.to.equal(undefined);
          expect(stored).to.deep.equal(expected!.map(asJson));
        } else {
          expect(result.code, result.stderr).to.equal(ExitCode.Usage);
          expect(result.stderr).to.match(/^stint: stdin/);
          expect(expected === undefined || expected.some(refusedByCore), result.stderr).to.equal(true);
          expect(stored).to.deep.equal([]);
        }
      }),
      { numRuns: 40 },
    );
  });
});
