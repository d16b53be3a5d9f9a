import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";

/** The repository root, from packages/examples/dist/test/repository. */
const REPOSITORY = join(__dirname, "..", "..", "..", "..", "..");
const SCRIPT = join(REPOSITORY, "scripts", "api-report.mjs");

/** Runs the API report check on `@stint/core/driver` against the reports in `folder`. */
function checkDriverReport(folder: string): { readonly status: number | null; readonly output: string } {
  const run = spawnSync(process.execPath, [SCRIPT, "--only", "@stint/core/driver", "--report-dir", folder], { cwd: REPOSITORY, encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe("the API report check (npm run api:check)", function () {
  // API Extractor reads the entry point's declarations twice.
  this.timeout(60_000);

  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), "stint-api-report-test-"));
    for (const entry of ["index", "driver"]) copyFileSync(join(REPOSITORY, "packages", "core", "api", `${entry}.api.md`), join(folder, `core-${entry}.api.md`));
  });
  afterEach(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  it("passes on the committed report, and fails on a stale copy, showing the difference and how to update it", () => {
    expect(checkDriverReport(folder)).to.deep.equal({ status: 0, output: "api-report: 1 entry point up to date\n" });

    const report = join(folder, "core-driver.api.md");
    const committed = readFileSync(report, "utf8");
    const signature = "export function checkedJobStore<Tx>(";
    expect(committed).to.contain(signature);
    writeFileSync(report, committed.replace(signature, "export function checkedJobStore<Tx, Extra>("));

    const stale = checkDriverReport(folder);
    expect(stale.status).to.equal(1);
    expect(stale.output).to.contain("core-driver.api.md is out of date");
    expect(stale.output).to.contain("-export function checkedJobStore<Tx, Extra>(");
    expect(stale.output).to.contain(`+${signature}`);
    expect(stale.output).to.contain("npm run api:update");
  });
});
