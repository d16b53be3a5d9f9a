import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";

/** The repository root, from packages/examples/dist/test/repository. */
const REPOSITORY = join(__dirname, "..", "..", "..", "..", "..");
/** Plain JavaScript test files outside the suite's `dist/test/**\/*.test.js` glob. */
const FIXTURES = join(REPOSITORY, "packages", "examples", "test", "repository", "fixtures");
const MOCHA = require.resolve("mocha/bin/mocha.js");

interface MochaRun {
  readonly status: number | null;
  readonly output: string;
}

/**
 * Runs mocha in a child process with the repository's `.mocharc.json`,
 * its `spec` swapped for one fixture (mocha adds command-line files to the
 * configured ones, so the configuration itself has to change).
 */
function runWithRepositoryConfig(fixture: string): MochaRun {
  const config = JSON.parse(readFileSync(join(REPOSITORY, ".mocharc.json"), "utf8")) as Record<string, unknown>;
  const folder = mkdtempSync(join(tmpdir(), "stint-mocharc-"));
  try {
    const configFile = join(folder, "mocharc.json");
    writeFileSync(configFile, JSON.stringify({ ...config, spec: [join(FIXTURES, fixture)] }));
    const run = spawnSync(process.execPath, [MOCHA, "--config", configFile], { cwd: REPOSITORY, encoding: "utf8", timeout: 30_000 });
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

describe("the repository's mocha configuration", () => {
  it("passes a run with neither focused nor skipped tests", () => {
    const run = runWithRepositoryConfig("plain.cjs");
    expect(run.output).to.include("1 passing");
    expect(run.status).to.equal(0);
  });

  /** Each fixture that must fail the run, what it holds and mocha's message (kept beside the fixtures, which hold the constructs themselves). */
  const REFUSED = JSON.parse(readFileSync(join(FIXTURES, "refused.json"), "utf8")) as readonly { fixture: string; construct: string; message: string }[];
  for (const { fixture, construct, message } of REFUSED) {
    it(`fails a run that contains ${construct}`, () => {
      const run = runWithRepositoryConfig(fixture);
      expect(run.output).to.include(message);
      expect(run.status).to.not.equal(0);
    });
  }
});
