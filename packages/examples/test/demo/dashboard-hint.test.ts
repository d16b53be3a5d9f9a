import { expect } from "chai";
import { dashboardHint } from "../../src/demo/dashboard-hint";

describe("the demo's dashboard hint", () => {
  it("prints the command that opens the dashboard on the demo's schema", () => {
    const lines = dashboardHint({ schema: "stint_demo", throwaway: false });
    expect(lines.at(-1)).to.equal("  npx stint dashboard --schema stint_demo --no-auth --app @stint/examples/app");
    expect(lines.join("\n")).to.contain("reads DATABASE_URL");
  });

  it("says how to keep the data when the database was a throwaway one", () => {
    const lines = dashboardHint({ schema: "stint_demo", throwaway: true });
    expect(lines[0]).to.contain("throwaway PostgreSQL that is gone now");
    expect(lines.join("\n")).to.contain("DATABASE_URL=postgres://").and.contain("npx stint dashboard --schema stint_demo");
  });
});
