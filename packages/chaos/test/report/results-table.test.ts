import { expect } from "chai";
import { resultsTable } from "../../src/report/results-table";
import type { ScenarioResult } from "../../src/harness/scenario";

describe("resultsTable", () => {
  const row: ScenarioResult = {
    id: 1,
    title: "kill -9 worker processes",
    jobs: 10_000,
    faults: "32 × SIGKILL",
    lost: 0,
    duplicates: 0,
    reExecutions: 208,
    passed: true,
    failures: [],
    figures: ["re-executions 208 ≤ 239 in flight at the kills"],
    durationMs: 32_400,
  };

  it("prints one aligned Markdown row per scenario, then its figures", () => {
    const lines = resultsTable([row, { ...row, id: 2, title: "short", passed: false, failures: ["3 jobs lost"] }]).split("\n");
    expect(lines[0]).to.match(/^\| # \| scenario +\| jobs +\| faults injected +\| lost \| duplicates \| re-executions \| result \| time +\|$/);
    expect(lines[2]).to.equal("| 1 | kill -9 worker processes | 10,000 | 32 × SIGKILL    | 0    | 0          | 208           | pass   | 32.4 s |");
    expect(lines[3]).to.contain("| FAIL ");
    expect(new Set(lines.slice(0, 4).map((line) => line.length)).size).to.equal(1);
    expect(lines).to.include("1. re-executions 208 ≤ 239 in flight at the kills");
    expect(lines).to.include("   FAILED: 3 jobs lost");
  });
});
