import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { gitWithoutIdentity, type GitWithoutIdentity } from "../support/git-without-identity";

/** The repository root, from packages/examples/dist/test/repository. */
const REPOSITORY = join(__dirname, "..", "..", "..", "..", "..");
/** The test's own commits and tags in its throwaway clone bring their author. */
const AUTHOR = ["-c", "user.name=stint tests", "-c", "user.email=tests@stint.invalid"];

/**
 * Everything here runs as on a fresh machine whose git knows nobody (an
 * empty HOME, no global or system configuration): the dry run must bring
 * its own identity, not borrow the developer's.
 */
let machine: GitWithoutIdentity;

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", [...AUTHOR, ...args], { cwd, encoding: "utf8", env: machine.env }).trim();
}

/** `npm run release:dry` in `clone`, with the fresh machine's environment. */
function releaseDryRun(clone: string): string {
  return execFileSync(process.execPath, [join(clone, "scripts", "release-dry-run.mjs")], { cwd: clone, encoding: "utf8", env: machine.env });
}

/** Appends a line to `file` in `clone` and commits it with `summary`. */
function commit(clone: string, file: string, summary: string): void {
  writeFileSync(join(clone, file), `${readFileSync(join(clone, file), "utf8")}// ${summary}\n`);
  git(clone, "commit", "--quiet", "--all", "--message", summary);
}

function lernaVersion(folder: string): string {
  return (JSON.parse(readFileSync(join(folder, "lerna.json"), "utf8")) as { version: string }).version;
}

describe("npm run release:dry", () => {
  let clone: string;

  beforeEach(() => {
    machine = gitWithoutIdentity();
    clone = mkdtempSync(join(tmpdir(), "stint-release-test-"));
    git(REPOSITORY, "clone", "--quiet", REPOSITORY, clone);
    symlinkSync(join(REPOSITORY, "node_modules"), join(clone, "node_modules"));
    // The clone holds the committed script; the one under test is the working tree's.
    copyFileSync(join(REPOSITORY, "scripts", "release-dry-run.mjs"), join(clone, "scripts", "release-dry-run.mjs"));
    if (git(clone, "status", "--porcelain", "--", "scripts") !== "")
      git(clone, "commit", "--quiet", "--all", "--message", "chore: the dry run of the working tree");
  });

  afterEach(() => {
    rmSync(clone, { recursive: true, force: true });
    machine.remove();
  });

  it("bumps the minor version for a feat commit and writes its changelog entry, changing nothing", () => {
    commit(clone, "packages/core/src/index.ts", "feat(core): a feature for the dry run");
    commit(clone, "packages/cli/src/cli.ts", "fix(cli): a fix for the dry run");
    commit(clone, "packages/cli/src/cli.ts", "Change a line without a type");
    const head = git(clone, "rev-parse", "HEAD");
    const current = lernaVersion(clone);
    const [major, minor] = current.split(".").map(Number);

    const output = releaseDryRun(clone);

    expect(output).to.include(`release:dry: ${current} -> ${major}.${(minor ?? 0) + 1}.0`);
    const entry = output.slice(output.indexOf("The new entry of CHANGELOG.md:"));
    // Among the section's items: the branch's own feat and fix commits since the last release are listed too.
    expect(entry).to.match(/### Features\s+(?:\* .*\n+)*\* \*\*core:\*\* a feature for the dry run/);
    expect(entry).to.match(/### Bug Fixes\s+(?:\* .*\n+)*\* \*\*cli:\*\* a fix for the dry run/);
    expect(entry).to.not.include("Change a line without a type");
    expect(git(clone, "status", "--porcelain", "--", ".", ":!node_modules")).to.equal("");
    expect(git(clone, "rev-parse", "HEAD")).to.equal(head);
    expect(git(clone, "tag", "--list")).to.not.include(`v${major}.${(minor ?? 0) + 1}.0`);
  });

  it("says there is nothing to release when no package changed since the last release's tag", () => {
    const tag = `v${lernaVersion(clone)}`;
    git(clone, "tag", "--annotate", "--message", tag, tag, "HEAD");

    const output = releaseDryRun(clone);

    expect(output).to.include(`release:dry: nothing to release since ${tag}`);
  });
});
