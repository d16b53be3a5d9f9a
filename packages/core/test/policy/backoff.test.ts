import { expect } from "chai";
import fc from "fast-check";
import { backoffDelay, resolveBackoff, DEFAULT_BACKOFF } from "../../src/policy/backoff";
import { ConfigError } from "../../src/errors/config-errors";

describe("backoffDelay", () => {
  it("doubles from the base delay while below the cap", () => {
    const options = { baseMs: 1_000, maxMs: 60_000, jitter: 0 };
    expect([1, 2, 3, 4].map((attempt) => backoffDelay(attempt, options))).to.deep.equal([1_000, 2_000, 4_000, 8_000]);
  });

  it("never exceeds the cap before jitter", () => {
    expect(backoffDelay(40, { baseMs: 1_000, maxMs: 60_000, jitter: 0 })).to.equal(60_000);
  });

  it("stays within min(base·2^(n−1), max) ± jitter for every attempt, option and random draw", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, baseMs, extra, jitter, random) => {
          const options = { baseMs, maxMs: baseMs + extra, jitter };
          const raw = Math.min(baseMs * 2 ** (attempt - 1), options.maxMs);
          const delay = backoffDelay(attempt, options, () => random);
          expect(delay).to.be.at.least(Math.floor(raw * (1 - jitter)) - 1);
          expect(delay).to.be.at.most(Math.ceil(raw * (1 + jitter)) + 1);
          expect(Number.isInteger(delay)).to.equal(true);
        },
      ),
    );
  });

  it("spreads delays on both sides of the nominal value", () => {
    const options = { baseMs: 1_000, maxMs: 60_000, jitter: 0.2 };
    expect(backoffDelay(1, options, () => 0)).to.equal(800);
    expect(backoffDelay(1, options, () => 0.999999)).to.be.closeTo(1_200, 1);
  });
});

describe("resolveBackoff", () => {
  it("fills in defaults", () => {
    expect(resolveBackoff()).to.deep.equal(DEFAULT_BACKOFF);
  });

  it("names the option it refuses", () => {
    expect(() => resolveBackoff({ baseMs: -1 })).to.throw(ConfigError, "backoff.baseMs");
    expect(() => resolveBackoff({ baseMs: 10_000, maxMs: 5_000 })).to.throw(ConfigError, "backoff.maxMs");
    expect(() => resolveBackoff({ jitter: 2 })).to.throw(ConfigError, "backoff.jitter");
  });
});
