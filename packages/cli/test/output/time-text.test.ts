import { expect } from "chai";
import { LATEST_DATE_MS } from "@stint/core/driver";
import { formatTime, humanDuration, isoTime } from "../../src/output/time-text";

describe("humanDuration", () => {
  it("shows the two largest units", () => {
    expect(humanDuration(192_000)).to.equal("3m 12s");
    expect(humanDuration(7_500_000)).to.equal("2h 5m");
    expect(humanDuration(90_000_000)).to.equal("1d 1h");
    expect(humanDuration(45_000)).to.equal("45s");
  });

  it("drops a zero second unit and shows milliseconds under a second", () => {
    expect(humanDuration(3_600_000)).to.equal("1h");
    expect(humanDuration(850)).to.equal("850ms");
  });

  it("says infinity for an endless age instead of looping over units", () => {
    expect(humanDuration(Number.POSITIVE_INFINITY)).to.equal("infinity");
  });
});

describe("formatTime", () => {
  it("prints UTC to the second, or a dash", () => {
    expect(formatTime(new Date("2030-01-31T09:00:00.123Z"))).to.equal("2030-01-31 09:00:00Z");
    expect(formatTime(null)).to.equal("-");
  });
});

describe("formatTime and isoTime at the edges of Date", () => {
  it("print the Date bounds as infinity and -infinity, and far years in full", () => {
    expect(formatTime(new Date(LATEST_DATE_MS))).to.equal("infinity");
    expect(formatTime(new Date(-LATEST_DATE_MS))).to.equal("-infinity");
    expect(formatTime(new Date("+200000-01-01T00:00:00.000Z"))).to.equal("+200000-01-01 00:00:00Z");
    expect(formatTime(new Date("-004712-01-01T00:00:00.000Z"))).to.equal("-004712-01-01 00:00:00Z");
    expect(isoTime(new Date(LATEST_DATE_MS))).to.equal("infinity");
    expect(isoTime(new Date(-LATEST_DATE_MS))).to.equal("-infinity");
    expect(isoTime(new Date(0))).to.equal("1970-01-01T00:00:00.000Z");
    expect(isoTime(null)).to.equal(null);
  });
});
