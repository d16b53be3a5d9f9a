import { expect } from "chai";
import fc from "fast-check";
import { ConfigError } from "../../src/errors/config-errors";
import { checkControlsChange } from "../../src/queue/check-controls-change";
import { formatRateLimit, parseRateLimit } from "../../src/queue/rate-limit-text";
import { MAX_RATE_LIMIT } from "../../src/limits";

describe("rate limit text", () => {
  it("reads N/period with the documented period names and counts", () => {
    expect(parseRateLimit("100/min")).to.deep.equal({ limit: 100, periodMs: 60_000 });
    expect(parseRateLimit("50/s")).to.deep.equal({ limit: 50, periodMs: 1_000 });
    expect(parseRateLimit(" 5 / 10s ")).to.deep.equal({ limit: 5, periodMs: 10_000 });
    expect(parseRateLimit("1000/hour")).to.deep.equal({ limit: 1_000, periodMs: 3_600_000 });
    expect(parseRateLimit("3/2minute")).to.deep.equal({ limit: 3, periodMs: 120_000 });
  });

  it("refuses anything else with a message naming the option and the input", () => {
    for (const text of ["", "100", "100/", "/min", "0/min", "1.5/s", "10/fortnight", "-1/s", `${MAX_RATE_LIMIT + 1}/s`, "1/0s", "1/25hour"]) {
      expect(() => parseRateLimit(text, "--rate"), JSON.stringify(text)).to.throw(ConfigError, /--rate/);
    }
  });

  it("writes every limit so that reading it back gives the same limit", () => {
    const limits = fc.record({
      limit: fc.integer({ min: 1, max: MAX_RATE_LIMIT }),
      periodMs: fc.oneof(
        fc.integer({ min: 1, max: 86_400 }).map((s) => s * 1_000),
        fc.integer({ min: 1, max: 24 }).map((h) => h * 3_600_000),
      ),
    });
    fc.assert(
      fc.property(limits, (limit) => {
        expect(parseRateLimit(formatRateLimit(limit))).to.deep.equal(limit);
      }),
    );
  });
});

describe("checkControlsChange", () => {
  it("accepts each field alone and null to remove a cap or a limit", () => {
    expect(checkControlsChange({ paused: true })).to.deep.equal({ paused: true });
    expect(checkControlsChange({ maxRunning: null, rateLimit: null })).to.deep.equal({ maxRunning: null, rateLimit: null });
    expect(checkControlsChange({ rateLimit: { limit: 5, periodMs: 1_000 } })).to.deep.equal({ rateLimit: { limit: 5, periodMs: 1_000 } });
  });

  it("refuses a fractional or non-positive cap, a non-boolean pause and unknown fields", () => {
    expect(() => checkControlsChange({ maxRunning: 2.5 })).to.throw(ConfigError, /maxRunning/);
    expect(() => checkControlsChange({ maxRunning: 0 })).to.throw(ConfigError, /maxRunning/);
    expect(() => checkControlsChange({ paused: 1 } as never)).to.throw(ConfigError, /paused/);
    expect(() => checkControlsChange({ limit: 3 } as never)).to.throw(ConfigError, /change\.limit/);
  });
});
