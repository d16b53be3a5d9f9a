import { expect } from "chai";
import { ALL_SCENARIOS } from "../../src/scenarios/all-scenarios";
import { SHORT_PROFILE } from "../../src/profile";
import { resultsTable } from "../../src/report/results-table";
import { runScenario } from "../../src/run-suite";
import type { ScenarioResult } from "../../src/harness/scenario";

// The chaos suite in its short profile: real worker processes, real kills, a real server restart.
// `npm run chaos` runs the same scenarios at full size and prints the table.
describe("the chaos suite (short profile)", function () {
  this.timeout(180_000);
  const seed = Number(process.env["CHAOS_SEED"] ?? Date.now() % 1_000_000);
  const results: ScenarioResult[] = [];

  after(() => {
    if (results.length > 0) process.stdout.write(`\n    chaos suite, short profile, seed ${seed}:\n${indent(resultsTable(results))}\n\n`);
  });

  for (const scenario of ALL_SCENARIOS) {
    it(`${scenario.id}. ${scenario.claim}`, async () => {
      const connectionString = process.env["DATABASE_URL"];
      if (!connectionString) throw new Error("DATABASE_URL must be set (npm test starts a throwaway PostgreSQL)");
      const result = await runScenario(scenario, { connectionString, profile: SHORT_PROFILE, seed });
      results.push(result);
      const context = `seed ${seed}; ${result.figures.join("; ")}`;
      expect(result.failures, context).to.deep.equal([]);
      expect(result.lost, context).to.equal(0);
      expect(result.duplicates, context).to.equal(0);
      expect(result.passed, context).to.equal(true);
    });
  }
});

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}
