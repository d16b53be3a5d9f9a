import { expect } from "chai";
import fc from "fast-check";
import { ConfigError, InvalidNameError } from "../../src/errors/config-errors";
import { assertQueueName, assertScheduleName, assertSqlIdentifier, assertStorableKey } from "../../src/validation/names";

describe("names", () => {
  describe("assertSqlIdentifier", () => {
    it("accepts plain lower-case identifiers, reserved words included (they are always quoted)", () => {
      for (const name of ["stint", "billing_jobs", "_private", "select", "user", "table", "a".repeat(63)]) {
        expect(assertSqlIdentifier(name, "schema")).to.equal(name);
      }
    });

    it("refuses anything else before it can reach SQL", () => {
      for (const name of ["", "Stint", "1jobs", 'x"; DROP TABLE jobs; --', "a b", "a".repeat(64), "jobs\u0000", "ｓｔｉｎｔ", undefined, 7]) {
        expect(() => assertSqlIdentifier(name, "schema"), JSON.stringify(name)).to.throw(InvalidNameError, "schema must be a plain SQL identifier");
      }
    });

    it("refuses names PostgreSQL reserves or shares", () => {
      for (const name of ["pg_catalog", "pg_toast", "pg_temp", "pg_anything", "public", "information_schema", "none"]) {
        expect(() => assertSqlIdentifier(name, "schema"), name).to.throw(InvalidNameError, "is reserved or shared in PostgreSQL");
      }
    });

    it("keeps a huge name out of the message", () => {
      expect(() => assertSqlIdentifier("x".repeat(1_000_000), "schema")).to.throw(InvalidNameError, "(1000000 characters)");
    });
  });

  describe("assertQueueName and assertScheduleName", () => {
    it("accept the same alphabet and refuse the same names", () => {
      fc.assert(
        fc.property(fc.string({ unit: "binary", maxLength: 140 }), (name) => {
          const queue = attempt(() => assertQueueName(name));
          const schedule = attempt(() => assertScheduleName(name));
          expect(queue).to.equal(schedule);
          if (queue === "ok") expect(name).to.match(/^[a-z0-9][a-z0-9_.:-]{0,127}$/);
        }),
      );
      expect(() => assertScheduleName("weekly report")).to.throw(InvalidNameError, "schedule name");
    });
  });

  describe("assertStorableKey", () => {
    it("accepts any text PostgreSQL stores byte for byte", () => {
      for (const key of ["invoice:812", "'; DROP TABLE jobs; --", "\u202Eevil", "zero\u200Bwidth", "😀", " "]) {
        expect(assertStorableKey("dedupeKey", key, 512)).to.equal(key);
      }
    });

    it("refuses NUL, unpaired surrogates, empty and overlong keys with a ConfigError naming the option", () => {
      for (const key of ["a\u0000b", "\uD800", "x\uDC00", "", "k".repeat(513), 42]) {
        expect(() => assertStorableKey("dedupeKey", key, 512), JSON.stringify(key)).to.throw(ConfigError, "Invalid option `dedupeKey`");
      }
    });
  });
});

function attempt(run: () => unknown): string {
  try {
    run();
    return "ok";
  } catch (thrown) {
    return (thrown as { code?: string }).code ?? "other";
  }
}
