import { expect } from "chai";
import fc from "fast-check";
import { formatDuration, parseDuration } from "../../src/time/duration-text";

describe("parseDuration", () => {
  it("reads each unit", () => {
    expect(parseDuration("500ms")).to.equal(500);
    expect(parseDuration("25s")).to.equal(25_000);
    expect(parseDuration("4m")).to.equal(240_000);
    expect(parseDuration("2h")).to.equal(7_200_000);
    expect(parseDuration("1d")).to.equal(86_400_000);
  });

  it("adds units given largest first", () => {
    expect(parseDuration("1h30m")).to.equal(5_400_000);
    expect(parseDuration("1m30s250ms")).to.equal(90_250);
    expect(parseDuration("0")).to.equal(0);
  });

  it("refuses text that is not a duration", () => {
    for (const text of ["", "30", "1.5s", "-5s", "1s1h", "1m1m", "5 s", "s", "1w", "4M", "1h 30m", "ms"]) {
      expect(parseDuration(text), text).to.equal(undefined);
    }
  });

  it("reads back what formatDuration writes, for any duration", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 10 * 365 * 86_400_000 }), (ms) => parseDuration(formatDuration(ms)) === ms));
  });

  it("sums any descending list of unit amounts", () => {
    const units = [
      ["d", 86_400_000],
      ["h", 3_600_000],
      ["m", 60_000],
      ["s", 1_000],
      ["ms", 1],
    ] as const;
    const amounts = fc.tuple(...units.map(() => fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: undefined })));
    fc.assert(
      fc.property(amounts, (values) => {
        const parts = units.flatMap(([unit, size], index) =>
          values[index] === undefined ? [] : [{ text: `${values[index]}${unit}`, ms: values[index] * size }],
        );
        fc.pre(parts.length > 0);
        return parseDuration(parts.map((part) => part.text).join("")) === parts.reduce((sum, part) => sum + part.ms, 0);
      }),
    );
  });
});

describe("formatDuration", () => {
  it("writes the shortest form", () => {
    expect(formatDuration(0)).to.equal("0ms");
    expect(formatDuration(5_400_000)).to.equal("1h30m");
    expect(formatDuration(1_500)).to.equal("1s500ms");
    expect(formatDuration(90_061_001)).to.equal("1d1h1m1s1ms");
  });
});
