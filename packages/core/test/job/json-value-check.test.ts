import { expect } from "chai";
import fc from "fast-check";
import { assertJsonValue } from "../../src/job/json-value-check";
import { MAX_PAYLOAD_DEPTH } from "../../src/limits";
import { serializePayload } from "../../src/job/serialize-payload";
import { PayloadError } from "../../src/errors/config-errors";

class Money {
  readonly #cents: number;
  constructor(cents: number) {
    this.#cents = cents;
  }
  get cents(): number {
    return this.#cents;
  }
}

function refusal(value: unknown): PayloadError {
  try {
    assertJsonValue(value);
  } catch (thrown) {
    expect(thrown).to.be.instanceOf(PayloadError);
    return thrown as PayloadError;
  }
  throw new Error(`accepted ${String(value)}`);
}

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < depth; level += 1) value = level % 2 === 0 ? [value] : { next: value };
  return value;
}

describe("assertJsonValue", () => {
  it("refuses values JSON would change, naming the path and what to do", () => {
    const sparse = [1, , 3]; // eslint-disable-line no-sparse-arrays -- a hole is what is under test
    const labelled = Object.assign([1, 2], { label: "x" });
    const hidden = Object.defineProperty({ a: 1 }, "secret", { value: 2, enumerable: false });
    const cases: Array<[unknown, string, string]> = [
      [
        { items: [{}, {}, {}, { tags: new Set(["a"]) }] },
        "payload.items[3].tags",
        "payload.items[3].tags: a Set cannot be stored as JSON; convert it to an array",
      ],
      [{ index: new Map([["a", 1]]) }, "payload.index", "a Map cannot be stored as JSON; convert it to an object"],
      [{ at: new Date(0) }, "payload.at", "a Date would come back as a string; pass date.toISOString()"],
      [{ bytes: new Uint8Array(2) }, "payload.bytes", "a Uint8Array (binary data) cannot be stored as JSON"],
      [{ file: Buffer.from("x") }, "payload.file", "a Buffer (binary data)"],
      [{ raw: new ArrayBuffer(4) }, "payload.raw", "ArrayBuffer (binary data)"],
      [{ n: new Number(1) }, "payload.n", "a boxed Number would come back as a primitive"],
      [{ s: new String("x") }, "payload.s", "a boxed String"],
      [{ price: new Money(100) }, "payload.price", "a Money instance cannot be stored as JSON faithfully"],
      [{ list: [1, undefined] }, "payload.list[1]", "is undefined, which JSON would store as null in an array"],
      [{ list: sparse }, "payload.list", "is a sparse array"],
      [{ list: labelled }, "payload.list", "non-index properties"],
      [{ o: { toJSON: () => ({}) } }, "payload.o", "has a toJSON method"],
      [{ o: { [Symbol("k")]: 1 } }, "payload.o", "symbol keys"],
      [{ o: hidden }, "payload.o", "non-enumerable"],
      [{ "a b": { c: Number.POSITIVE_INFINITY } }, 'payload["a b"].c', "is Infinity, which JSON would store as null"],
      [{ re: /x/ }, "payload.re", "a RegExp instance"],
    ];
    for (const [value, path, message] of cases) {
      const error = refusal(value);
      expect(error.path, message).to.equal(path);
      expect(error.message, message).to.include(message);
      expect(error.code).to.equal("STINT_PAYLOAD");
    }
  });

  it("accepts plain objects, null-prototype objects and arrays, leaving out undefined properties", () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: [1, "x", null, true, { b: -1.5 }] });
    expect(() => assertJsonValue(bare)).not.to.throw();
    expect(serializePayload({ a: 1, gone: undefined })).to.equal('{"a":1}');
    expect(serializePayload({ zero: -0 })).to.equal('{"zero":0}');
  });

  it(`accepts nesting of ${MAX_PAYLOAD_DEPTH} levels and refuses one more, however deep`, () => {
    expect(() => assertJsonValue(nested(MAX_PAYLOAD_DEPTH))).not.to.throw();
    for (const depth of [MAX_PAYLOAD_DEPTH + 1, 100_000]) {
      const error = refusal(nested(depth));
      expect(error.message).to.include(`nested more than ${MAX_PAYLOAD_DEPTH} levels deep`);
      expect(error.path!.match(/\[0\]|\.next/g)).to.have.length(MAX_PAYLOAD_DEPTH);
    }
  });

  it("refuses a cycle as a cycle", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = [cyclic];
    expect(refusal(cyclic).message).to.equal("payload is not JSON-serialisable: payload.self[0] is a circular reference, which JSON cannot carry");
  });

  it("accepts exactly the values that come back from JSON deep-equal (property)", () => {
    fc.assert(
      fc.property(
        fc.anything({
          withMap: true,
          withSet: true,
          withDate: true,
          withTypedArray: true,
          withBoxedValues: true,
          withSparseArray: true,
          withNullPrototype: true,
          maxDepth: 4,
        }),
        (value) => {
          let text: string;
          try {
            text = serializePayload(value);
          } catch (thrown) {
            expect(thrown).to.be.instanceOf(PayloadError);
            return;
          }
          expect(JSON.parse(text)).to.deep.equal(withoutUndefinedProperties(value));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("assertJsonValue on flat objects", () => {
  /** Text `jsonb` keeps: no NUL, no unpaired surrogate. */
  const storable = (text: string): boolean => !text.includes("\u0000") && !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
  const item = fc.oneof(
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.string({ unit: "binary", maxLength: 6 }),
    fc.string({ unit: fc.constantFrom("a", "\u0000", "\ud800", "\udc00"), maxLength: 3 }),
    fc.bigInt(),
    fc.constant(() => 1),
    fc.constant([1]),
    fc.constant({ nested: true }),
  );
  const key = fc.oneof(fc.string({ maxLength: 4 }), fc.string({ unit: fc.constantFrom("k", "\u0000", "\ud800"), maxLength: 3 }));

  it("accepts one exactly when every key and value is one JSON and jsonb keep, whatever its prototype (property)", () => {
    fc.assert(
      fc.property(fc.dictionary(key, item, { maxKeys: 6 }), fc.boolean(), (entries, nullPrototype) => {
        const value: Record<string, unknown> = nullPrototype ? Object.assign(Object.create(null) as object, entries) : { ...entries };
        const expected = Object.entries(value).every(
          ([name, field]) =>
            // JSON leaves an undefined property out, key and all.
            field === undefined ||
            (storable(name) &&
              (field === null ||
                typeof field === "boolean" ||
                (typeof field === "number" && Number.isFinite(field)) ||
                (typeof field === "string" && storable(field)) ||
                Array.isArray(field) ||
                (typeof field === "object" && field !== null))),
        );
        let accepted = true;
        try {
          assertJsonValue(value);
        } catch (thrown) {
          expect(thrown).to.be.instanceOf(PayloadError);
          accepted = false;
        }
        expect(accepted, JSON.stringify(Object.keys(value))).to.equal(expected);
      }),
      { numRuns: 500 },
    );
  });

  it("refuses, as the full check does, an object with a symbol key, a hidden property, a toJSON method or an inherited key", () => {
    const withSymbol = { a: 1, [Symbol("s")]: 2 };
    const hidden = Object.defineProperty({ a: 1 }, "b", { value: 2, enumerable: false });
    const withToJson = { a: 1, toJSON: () => "x" };
    const inherited = Object.create({ extra: 1 }) as Record<string, unknown>;
    inherited["a"] = 1;
    for (const value of [withSymbol, hidden, withToJson, inherited]) expect(() => assertJsonValue(value)).to.throw(PayloadError);
  });
});

/** What JSON does on purpose and the check accepts: undefined properties left out, -0 as 0. */
export function withoutUndefinedProperties(value: unknown): unknown {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value)) return value.map(withoutUndefinedProperties);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .map(([key, item]) => [key, withoutUndefinedProperties(item)]),
  );
}
