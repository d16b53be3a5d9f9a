import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { expect } from "chai";
import { gitWithoutIdentity, type GitWithoutIdentity } from "../support/git-without-identity";

/** The repository root, from packages/examples/dist/test/repository. */
const REPOSITORY = join(__dirname, "..", "..", "..", "..", "..");
const MOCHA = require.resolve("mocha/bin/mocha.js");

/** A file that starts git (`execFileSync("git", …)`, `spawnSync("git", …)`). */
const RUNS_GIT = /["'`]git["'`]/;

/**
 * Every file of the test suite and of scripts/ that runs git, and where it
 * is shown to work on a machine whose git has no identity. A new one
 * fails the first test below until it is added here, with its proof.
 */
const GIT_USERS: Readonly<Record<string, string>> = {
  "scripts/release-dry-run.mjs": "release-dry-run.test.ts runs it without a git identity",
  "packages/examples/test/repository/release-dry-run.test.ts": "runs its throwaway repository without a git identity",
  "scripts/api-report.mjs": "its diff of a stale report runs below",
  "packages/throwaway-postgres/test/fresh-clone.test.ts": "its listing of the working tree runs below",
  "packages/examples/test/repository/git-without-identity.test.ts": "this file",
  "scripts/peer-bench/stint-adapter.mjs": "not run by npm test: the peer benchmark reads the commit it measures",
};

/** The test sources of every package, and every script, as paths from the repository root. */
function suiteFiles(): string[] {
  const found: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name === "dist") continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(?:ts|mjs|cjs|js)$/.test(entry.name)) found.push(relative(REPOSITORY, path).split(sep).join("/"));
    }
  };
  walk(join(REPOSITORY, "scripts"));
  for (const pkg of readdirSync(join(REPOSITORY, "packages"), { withFileTypes: true })) {
    if (!pkg.isDirectory()) continue;
    const tests = join(REPOSITORY, "packages", pkg.name, "test");
    if (existsSync(tests)) walk(tests);
  }
  return found.sort();
}

describe("the suite's git-using parts on a machine whose git has no identity (an empty HOME, no global or system config)", function () {
  // The API report test reads an entry point's declarations twice.
  this.timeout(90_000);

  let machine: GitWithoutIdentity;
  beforeEach(() => {
    machine = gitWithoutIdentity();
  });
  afterEach(() => {
    machine.remove();
  });

  it("names every file of the suite and of scripts/ that runs git", () => {
    const users = suiteFiles().filter((file) => RUNS_GIT.test(readFileSync(join(REPOSITORY, file), "utf8")));
    expect(users, "files that run git: add each new one to GIT_USERS, with where it runs without a git identity").to.have.members(Object.keys(GIT_USERS));
  });

  it("makes nothing up: a commit without an identity of its own fails there", () => {
    const attempt = spawnSync("git", ["commit-tree", "-m", "probe", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"], {
      cwd: REPOSITORY,
      env: machine.env,
      encoding: "utf8",
    });
    expect(attempt.status).to.not.equal(0);
    expect(attempt.stderr).to.match(/identity unknown|no email was given/);
  });

  it("lists the working tree as the fresh-clone test copies it", () => {
    const listing = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: REPOSITORY,
      env: machine.env,
      encoding: "utf8",
    });
    expect(listing.split("\0")).to.include.members(["package.json", "scripts/release-dry-run.mjs"]);
  });

  it("passes the API report test, whose check shows a stale report's difference with git diff", () => {
    const run = spawnSync(process.execPath, [MOCHA, "--no-config", "--timeout", "60000", "--exit", join(__dirname, "api-report.test.js")], {
      cwd: REPOSITORY,
      env: machine.env,
      encoding: "utf8",
      timeout: 80_000,
    });
    const output = `${run.stdout}${run.stderr}`;
    expect(run.status, output).to.equal(0);
    expect(output).to.include("1 passing");
  });
});
