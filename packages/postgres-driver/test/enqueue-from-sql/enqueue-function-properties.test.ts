import { MAX_DEDUPE_KEY_LENGTH, MAX_PAYLOAD_DEPTH, MAX_QUEUE_NAME_LENGTH, PayloadError } from "@stint/core";
import { assertQueueName, assertStorableKey, serializePayload } from "@stint/core/driver";
import { expect } from "chai";
import fc from "fast-check";
import pg from "pg";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { JsonText, sqlEnqueue, type SqlEnqueueOutcome } from "./sql-enqueue";

/** Runs of each property: each is one call of the function, about a millisecond. */
const RUNS = 300;

/** Whether `check` accepts (returns) or refuses (throws). */
function libraryAccepts(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

/** Whether the SQL function accepted; a refusal must be its own (22023, naming `column`), not some other error. */
function sqlAccepts(outcome: SqlEnqueueOutcome, column: string): boolean {
  if (outcome.refused === undefined) return true;
  expect(outcome.refused).to.include({ code: "22023", column });
  return false;
}

/** Characters at the edges of the queue-name rule: the allowed ones, their upper-case and look-alike neighbours, separators. */
const QUEUE_CHARACTERS = ["a", "m", "z", "0", "9", "_", ".", ":", "-", "A", "Z", " ", "/", "\n", "é", "ß", "ı", "K", "İ", "ｚ", "𝐚", "😀"];

const queueNames = fc.oneof(
  fc.string({ unit: fc.constantFrom(...QUEUE_CHARACTERS), maxLength: 12 }),
  // Around the length limit: valid characters, with a random one anywhere.
  fc
    .tuple(fc.integer({ min: MAX_QUEUE_NAME_LENGTH - 3, max: MAX_QUEUE_NAME_LENGTH + 3 }), fc.constantFrom(...QUEUE_CHARACTERS), fc.nat())
    .map(([length, odd, at]) => {
      const name = "q".repeat(length);
      const index = at % (length + 1);
      return name.slice(0, index) + odd + name.slice(index + 1);
    }),
);

/** Keys whose length in UTF-16 units is near the limit, with characters of one, two and three UTF-8 bytes and beyond U+FFFF. */
const dedupeKeys = fc.oneof(
  fc.string({ unit: fc.constantFrom("k", "é", "中", "😀", "𝄞"), maxLength: 600 }),
  fc
    .tuple(fc.integer({ min: 0, max: MAX_DEDUPE_KEY_LENGTH / 2 }), fc.integer({ min: -2, max: 2 }), fc.constantFrom("k", "é", "中"))
    .map(([astral, off, plain]) => "😀".repeat(astral) + plain.repeat(Math.max(0, MAX_DEDUPE_KEY_LENGTH - 2 * astral + off))),
);

/** A value nested `depth` containers deep along one path, each an array or an object, with scalars beside it. */
const nestedValues = fc
  .tuple(fc.integer({ min: MAX_PAYLOAD_DEPTH - 3, max: MAX_PAYLOAD_DEPTH + 3 }), fc.array(fc.boolean(), { minLength: 70, maxLength: 70 }), fc.boolean())
  .map(([depth, arrays, siblings]) => {
    let value: unknown = arrays[0] ? [] : {};
    for (let level = 1; level < depth; level += 1) {
      value = arrays[level] ? (siblings ? [1, value, "x"] : [value]) : siblings ? { a: 1, b: value } : { b: value };
    }
    return value;
  });

/** Text that JSON escapes, PostgreSQL's separators (`, ` and `: `) inside strings, and multi-byte characters. */
const text = fc.string({
  unit: fc.constantFrom("a", " ", '"', "\\", "\n", "\t", "\u0001", "\u001f", "\u007f", "é", "中", "😀", ",", ":", ", ", ": ", "/", "\u2028"),
  maxLength: 12,
});

/** JSON of integers, strings, booleans and null, whose text PostgreSQL writes as JavaScript does, bar the spaces. */
const jsonValues = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.integer(),
    text,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(text, tie("value"), { maxKeys: 5 }),
  ),
})).value;

describe("the enqueue SQL function and the library draw the same lines", () => {
  let test: TestSchema;
  let client: pg.Client;

  before(async () => {
    test = await createTestSchema({ maxConnections: 2 });
    client = new pg.Client({ connectionString: test.connectionString });
    await client.connect();
  });
  after(async () => {
    await client.end();
    await test.drop();
  });

  it("accept and refuse the same queue names", async () => {
    await fc.assert(
      fc.asyncProperty(queueNames, async (queue) => {
        const sqlSays = sqlAccepts(await sqlEnqueue(client, test.schema, queue, { n: 1 }), "queue");
        expect(sqlSays, JSON.stringify(queue)).to.equal(libraryAccepts(() => assertQueueName(queue)));
      }),
      { numRuns: RUNS },
    );
  });

  it("count dedupe keys in the same units", async () => {
    await fc.assert(
      fc.asyncProperty(dedupeKeys, async (key) => {
        const sqlSays = sqlAccepts(await sqlEnqueue(client, test.schema, "keys", { n: 1 }, { dedupe_key: key }), "dedupe_key");
        expect(sqlSays, `a key of ${key.length} UTF-16 units`).to.equal(libraryAccepts(() => assertStorableKey("dedupeKey", key, MAX_DEDUPE_KEY_LENGTH)));
      }),
      { numRuns: RUNS },
    );
  });

  it("measure a payload's nesting alike", async () => {
    await fc.assert(
      fc.asyncProperty(nestedValues, async (payload) => {
        const librarySays = libraryAccepts(() => serializePayload(payload));
        if (!librarySays) expect(() => serializePayload(payload)).to.throw(PayloadError, /nested more than 64 levels/);
        expect(sqlAccepts(await sqlEnqueue(client, test.schema, "depth", payload), "payload")).to.equal(librarySays);
      }),
      { numRuns: RUNS },
    );
  });

  it("measure a payload's size alike: its JSON text as JSON.stringify writes it", async () => {
    await fc.assert(
      fc.asyncProperty(jsonValues, async (payload) => {
        const json = serializePayload(payload);
        const bytes = Buffer.byteLength(json);
        const limit = Math.max(2, bytes);
        expect(
          sqlAccepts(await sqlEnqueue(client, test.schema, "size", new JsonText(json), { max_payload_bytes: limit }), "payload"),
          `${json} at ${limit}`,
        ).to.equal(true);
        if (bytes <= 2) return;
        const { refused } = await sqlEnqueue(client, test.schema, "size", new JsonText(json), { max_payload_bytes: bytes - 1 });
        expect(refused?.message, json).to.equal(`payload of queue "size" is ${bytes} bytes of JSON, more than the limit of ${bytes - 1} bytes`);
        expect(() => serializePayload(payload, bytes - 1)).to.throw(PayloadError, `is ${bytes} bytes of JSON`);
      }),
      { numRuns: RUNS },
    );
  });
});
