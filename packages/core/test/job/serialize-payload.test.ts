import { expect } from "chai";
import fc from "fast-check";
import { serializePayload, serializeResult } from "../../src/job/serialize-payload";
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
    cyclic.self = cyclic;
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

  it("accepts values with toJSON, such as dates", () => {
    expect(serializePayload({ at: new Date(0) })).to.equal('{"at":"1970-01-01T00:00:00.000Z"}');
  });

  it("refuses a payload over the size limit", () => {
    expect(() => serializePayload({ text: "x".repeat(100) }, 50)).to.throw(PayloadError, "more than the limit of 50 bytes");
  });
});

describe("serializeResult", () => {
  it("stores undefined as null and never throws", () => {
    expect(serializeResult(undefined)).to.equal(null);
    expect(serializeResult({ sent: true })).to.equal('{"sent":true}');
    expect(JSON.parse(serializeResult({ big: 1n }) ?? "null")).to.have.property("unserialisableResult");
  });
});
