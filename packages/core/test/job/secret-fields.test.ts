import { expect } from "chai";
import fc from "fast-check";
import { ConfigError } from "../../src/errors/config-errors";
import { defineJob } from "../../src/job/job-definition";
import { REDACTED, redact, redactingLogger, redactText, resolveSecretFields, secretValuesOf } from "../../src/job/secret-fields";
import { capturingLogger, type CapturedLine as Line } from "../support/capturing-logger";

describe("secret fields", () => {
  describe("secretValuesOf", () => {
    it("finds strings and numbers at dotted paths, in arrays and under *", () => {
      const payload = {
        apiKey: "sk_live_123",
        card: { number: "4242 4242 4242 4242", cvc: 123, holder: "Ada" },
        recipients: [{ token: "tok_a" }, { token: "tok_b" }],
        vault: { a: { pin: "1111" }, b: { pin: "2222" } },
        verified: true,
      };
      const secrets = secretValuesOf(payload, ["apiKey", "card.number", "card.cvc", "recipients.token", "vault.*.pin", "verified"]);
      expect([...secrets].sort()).to.deep.equal(["1111", "123", "2222", "4242 4242 4242 4242", "sk_live_123", "tok_a", "tok_b"].sort());
    });

    it("takes every leaf below a path that names an object", () => {
      expect([...secretValuesOf({ card: { number: "4242", exp: { month: 12, year: 2030 } } }, ["card"])].sort()).to.deep.equal(["12", "2030", "4242"]);
    });

    it("adds the form a value takes inside JSON text", () => {
      const secrets = secretValuesOf({ password: 'p"a\\ss' }, ["password"]);
      expect(secrets).to.include('p"a\\ss');
      expect(secrets).to.include('p\\"a\\\\ss');
    });

    it("ignores paths that are missing and payloads that are not objects", () => {
      expect(secretValuesOf({ a: 1 }, ["b.c"])).to.deep.equal([]);
      expect(secretValuesOf("just text", ["a"])).to.deep.equal([]);
      expect(secretValuesOf(null, ["a"])).to.deep.equal([]);
    });
  });

  describe("redactText", () => {
    it("replaces every occurrence, preferring the longest secret", () => {
      expect(redactText("key sk_1 and sk_12 and sk_1", ["sk_1", "sk_12"])).to.equal(`key ${REDACTED} and ${REDACTED} and ${REDACTED}`);
    });

    it("treats regular-expression characters in a secret as text", () => {
      expect(redactText("pw is a.b*c+(d)", ["a.b*c+(d)"])).to.equal(`pw is ${REDACTED}`);
      expect(redactText("pw is axbbc", ["a.b*c"])).to.equal("pw is axbbc");
    });

    it("never leaves a secret between the markers, and leaves other text alone (property)", () => {
      fc.assert(
        fc.property(fc.string({ unit: "binary" }), fc.array(fc.string({ unit: "binary", minLength: 1 }), { maxLength: 5 }), (text, secrets) => {
          const pieces = redactText(text, secrets).split(REDACTED);
          for (const piece of pieces) for (const secret of secrets) expect(piece.includes(secret), `${JSON.stringify(secret)} survived`).to.equal(false);
        }),
      );
    });

    it("replaces exactly the secrets in a text of secrets and other words (property)", () => {
      // Secrets and other words use two alphabets, so the expected text is known.
      const secret = fc.string({ unit: fc.constantFrom("s", "e", "c", "r", "t", "1", "2"), minLength: 1, maxLength: 12 });
      const word = fc.string({ unit: fc.constantFrom("a", "b", " ", ":", "\n", "é", "😀"), minLength: 1, maxLength: 12 });
      fc.assert(
        fc.property(
          fc.uniqueArray(secret, { minLength: 1, maxLength: 4 }),
          fc.array(fc.tuple(word, fc.nat()), { maxLength: 10 }),
          word,
          (secrets, parts, tail) => {
            const chosen = parts.map(([other, index]) => [other, secrets[index % secrets.length] as string] as const);
            const text = chosen.map(([other, s]) => other + s).join("") + tail;
            const expected = chosen.map(([other]) => other + REDACTED).join("") + tail;
            expect(redactText(text, secrets)).to.equal(expected);
          },
        ),
      );
    });
  });

  describe("redact", () => {
    it("returns a copy with the fields replaced and leaves the payload alone", () => {
      const payload = { to: "a@example.com", card: { number: "4242", brand: "visa" }, items: [{ token: "t1" }, { token: "t2" }] };
      const copy = redact(payload, ["card.number", "items.token", "missing.field"]);
      expect(copy).to.deep.equal({
        to: "a@example.com",
        card: { number: REDACTED, brand: "visa" },
        items: [{ token: REDACTED }, { token: REDACTED }],
      });
      expect(payload.card.number).to.equal("4242");
      expect(payload.items[0]?.token).to.equal("t1");
    });

    it("copies a __proto__ key as data, never as the copy's prototype", () => {
      const payload = JSON.parse('{"__proto__": {"isAdmin": true}, "card": {"number": "4242"}}') as Record<string, unknown>;
      const copy = redact(payload, ["card.number"]);
      expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype);
      expect((copy as { isAdmin?: unknown }).isAdmin).to.equal(undefined);
      expect(Object.prototype.hasOwnProperty.call(copy, "__proto__")).to.equal(true);
      expect(JSON.stringify(copy)).to.equal('{"__proto__":{"isAdmin":true},"card":{"number":"[redacted]"}}');
    });

    it("replaces a whole object named by a path", () => {
      expect(redact({ card: { number: "4242" }, id: 7 }, ["card"])).to.deep.equal({ card: REDACTED, id: 7 });
    });

    it("keeps no secret value in the JSON of the copy (property)", () => {
      fc.assert(
        fc.property(
          fc.dictionary(
            fc.string({ minLength: 1 }).filter((key) => !key.includes(".") && !key.includes("*")),
            fc.jsonValue(),
          ),
          fc.string({ minLength: 6 }),
          (rest, secret) => {
            const payload = { ...rest, secret: { value: secret } };
            const copy = redact(payload, ["secret.value"]);
            expect(copy.secret.value).to.equal(REDACTED);
            expect(copy).to.deep.equal({ ...rest, secret: { value: REDACTED } });
          },
        ),
      );
    });
  });

  describe("redactingLogger", () => {
    it("redacts messages, fields and the fields of children", () => {
      const lines: Line[] = [];
      const log = redactingLogger(capturingLogger(lines), secretValuesOf({ apiKey: "sk_live_9" }, ["apiKey"]));
      log.child({ note: "key sk_live_9" }).error("calling with sk_live_9", { header: "Bearer sk_live_9", nested: { list: ["sk_live_9"] }, count: 3 });
      log.info("nothing secret here", { count: 3 });
      expect(JSON.stringify(lines)).not.to.include("sk_live_9");
      expect(lines[0]).to.deep.equal({
        level: "error",
        message: `calling with ${REDACTED}`,
        fields: { note: `key ${REDACTED}`, header: `Bearer ${REDACTED}`, nested: { list: [REDACTED] }, count: 3 },
      });
      expect(lines[1]).to.deep.equal({ level: "info", message: "nothing secret here", fields: { count: 3 } });
    });

    it("redacts a number field equal to a secret number", () => {
      const lines: Line[] = [];
      redactingLogger(capturingLogger(lines), secretValuesOf({ card: { cvc: 737 } }, ["card.cvc"])).warn("declined", { cvc: 737, attempt: 2 });
      expect(lines[0]?.fields).to.deep.equal({ cvc: REDACTED, attempt: 2 });
    });

    it("is the logger itself when there is nothing to redact", () => {
      const log = capturingLogger([]);
      expect(redactingLogger(log, [])).to.equal(log);
    });
  });

  describe("defineJob({ secretFields })", () => {
    it("keeps the paths on the job kind", () => {
      expect(defineJob("charge-card", { secretFields: ["card.number", "apiKey"] }).secretFields).to.deep.equal(["card.number", "apiKey"]);
      expect(defineJob("plain").secretFields).to.deep.equal([]);
    });

    it("refuses paths that are not dotted field names", () => {
      for (const bad of [[""], ["a..b"], ["a.b*"], [7], "card.number"]) {
        expect(() => resolveSecretFields(bad), JSON.stringify(bad)).to.throw(ConfigError, "secretFields");
      }
    });
  });
});
