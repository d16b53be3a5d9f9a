import { expect } from "chai";
import { sparkline } from "../../src/pages/sparkline";

describe("sparkline", () => {
  it("scales the counts to the box, the largest at the top, and lists them for screen readers", () => {
    const svg = sparkline([0, 5, 10], "done <per> 5 min").toString();
    expect(svg).to.contain('d="M0,23 L48,12 L96,1"');
    expect(svg).to.contain('aria-label="done &lt;per&gt; 5 min: 0, 5, 10"');
  });

  it("draws a flat line for no jobs at all", () => {
    expect(sparkline([0, 0, 0], "x").toString()).to.contain('d="M0,23 L48,23 L96,23"');
  });
});
