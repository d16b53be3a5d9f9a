import { expect } from "chai";
import { formatTime, humanDuration } from "../../src/output/time-text";

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
});

describe("formatTime", () => {
  it("prints UTC to the second, or a dash", () => {
    expect(formatTime(new Date("2030-01-31T09:00:00.123Z"))).to.equal("2030-01-31 09:00:00Z");
    expect(formatTime(null)).to.equal("-");
  });
});
