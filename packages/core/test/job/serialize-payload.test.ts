import { expect } from "chai";
import fc from "fast-check";
import { assertStorableJson, serializePayload, serializeResult } from "../../src/job/serialize-payload";
import { PayloadError } from "../../src/errors/config-errors";

describe("serializePayload", () => {
  it("round-trips every JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JSON.parse(serializePayload(value))).to.deep.equal(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it("refuses what JSON cannot carry, naming where it is", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    const cases: Array<[unknown, string]> = [
      [undefined, "payload is undefined"],
      [{ amount: 10n }, "payload.amount is a bigint"],
      [{ run: () => 1 }, "payload.run is a function"],
      [[1, Number.NaN], "payload[1] is NaN"],
      [cyclic, "payload.self is a circular reference"],
    ];
    for (const [payload, message] of cases) {
      expect(() => serializePayload(payload)).to.throw(PayloadError, message);
    }
  });

  it("refuses a Date, which would come back as a string, and says what to pass instead", () => {
    expect(() => serializePayload({ at: new Date(0) })).to.throw(
      PayloadError,
      "payload.at: a Date would come back as a string; pass date.toISOString() instead",
    );
    expect(serializePayload({ at: new Date(0).toISOString() })).to.equal('{"at":"1970-01-01T00:00:00.000Z"}');
  });

  it("refuses a payload over the size limit", () => {
    expect(() => serializePayload({ text: "x".repeat(100) }, 50)).to.throw(PayloadError, "more than the limit of 50 bytes");
  });

  it("counts the limit in bytes of UTF-8, accepting a payload exactly at it", () => {
    const text = JSON.stringify({ text: "é".repeat(10) }); // 2 bytes per é
    const bytes = Buffer.byteLength(text, "utf8");
    expect(serializePayload({ text: "é".repeat(10) }, bytes)).to.equal(text);
    let refused: unknown;
    try {
      serializePayload({ text: "é".repeat(10) }, bytes - 1, "send-invoice");
    } catch (thrown) {
      refused = thrown;
    }
    expect(refused).to.be.instanceOf(PayloadError);
    expect((refused as PayloadError).message).to.equal(`payload of queue "send-invoice" is ${bytes} bytes of JSON, more than the limit of ${bytes - 1} bytes`);
    expect(refused).to.include({ sizeBytes: bytes, limitBytes: bytes - 1 });
  });

  it("refuses text that PostgreSQL jsonb cannot store unchanged, in values and keys", () => {
    const cases: Array<[unknown, string]> = [
      [{ note: "a\u0000b" }, "payload.note must not contain NUL"],
      [{ note: "\uD800" }, "payload.note must not contain an unpaired UTF-16 surrogate"],
      [["ok", "\uDC00x"], "payload[1] must not contain an unpaired UTF-16 surrogate"],
      [{ "k\u0000": 1 }, "a key of payload must not contain NUL"],
    ];
    for (const [payload, message] of cases) {
      expect(() => serializePayload(payload), message).to.throw(PayloadError, message);
    }
    expect(() => serializePayload({ at: { toJSON: () => "\u0000" } })).to.throw(PayloadError, "payload.at has a toJSON method");
  });

  it("accepts surrogate pairs, escapes and hostile text as data", () => {
    const payload = { emoji: "😀", slash: "\\u0000", sql: "'; DROP TABLE jobs; --", rtl: "\u202E", zero: "\u200B" };
    expect(JSON.parse(serializePayload(payload))).to.deep.equal(payload);
  });
});

describe("assertStorableJson", () => {
  it("refuses NUL and unpaired surrogate escapes in hand-built JSON, and nothing else", () => {
    for (const bad of ['"\\u0000"', '"\\ud800"', '"\\udc00"', '"x\\\\\\u0000"', '"\\uD83D x"']) {
      expect(() => assertStorableJson(bad), bad).to.throw(PayloadError, "cannot be stored");
    }
    for (const good of ['"\\ud83d\\ude00"', '"\\\\u0000"', '{"a":"\\u0041"}', '"😀"']) {
      expect(() => assertStorableJson(good), good).not.to.throw();
    }
  });

  it("agrees with serializePayload on every string (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) }), (a, b) => {
        for (const text of [a, b, a + b]) {
          const json = JSON.stringify({ text });
          const storable = !text.includes("\u0000") && (text as unknown as { isWellFormed(): boolean }).isWellFormed();
          expect(
            attempt(() => assertStorableJson(json)),
            JSON.stringify(json),
          ).to.equal(storable);
        }
      }),
    );
  });
});

function attempt(run: () => void): boolean {
  try {
    run();
    return true;
  } catch {
    return false;
  }
}

describe("serializeResult", () => {
  it("stores a Date as its ISO string: results are read, not parsed back", () => {
    expect(serializeResult({ sentAt: new Date(0) })).to.equal('{"sentAt":"1970-01-01T00:00:00.000Z"}');
  });

  it("stores undefined as null and never throws", () => {
    expect(serializeResult(undefined)).to.equal(null);
    expect(serializeResult({ sent: true })).to.equal('{"sent":true}');
    expect(JSON.parse(serializeResult({ big: 1n }) ?? "null")).to.have.property("unserialisableResult");
  });

  it("replaces a result jsonb cannot store (NUL) with a note, so one result cannot fail a whole completion batch", () => {
    expect(JSON.parse(serializeResult({ text: "a\u0000b" }) ?? "null"))
      .to.have.property("unserialisableResult")
      .that.includes("NUL");
  });
});
