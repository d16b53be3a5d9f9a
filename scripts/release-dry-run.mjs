#!/usr/bin/env node
// Shows the next release without making it: the version `lerna version`
// would choose from the conventional-commit summaries since the last
// release, and the CHANGELOG.md entry it would write.
//
//   npm run release:dry
//
// Works on a temporary clone of the committed HEAD (uncommitted changes are
// not seen) and runs lerna-lite there with --no-git-tag-version --no-push,
// so nothing is committed, tagged or pushed; then deletes the clone. Until
// a `v<version>` tag for lerna.json's version exists, the release is
// counted from the commit that added CHANGELOG.md. Needs no network, and no
// git identity: the clone has one of its own for the tag it makes there.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The last line of the header lerna-lite keeps at the top of a CHANGELOG.md. */
const COMMIT_GUIDELINE = "See [Conventional Commits](https://conventionalcommits.org) for commit guidelines.";

const repository = new URL("..", import.meta.url).pathname;
const lerna = join(repository, "node_modules", "@lerna-lite", "cli", "dist", "cli.js");
const git = (cwd, ...args) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
const read = (folder, file) => readFileSync(join(folder, file), "utf8");
const versionIn = (folder) => JSON.parse(read(folder, "lerna.json")).version;

const clone = mkdtempSync(join(tmpdir(), "stint-release-"));
try {
  git(repository, "clone", "--quiet", repository, clone);
  // A machine whose git knows nobody (an empty HOME, a fresh CI image) could not make the annotated tag below.
  git(clone, "config", "user.name", "stint release dry run");
  git(clone, "config", "user.email", "release-dry-run@stint.invalid");
  const current = versionIn(clone);
  const tag = `v${current}`;
  if (git(clone, "tag", "--list", tag) === "") {
    const seed = git(clone, "log", "--diff-filter=A", "--format=%H", "--", "CHANGELOG.md").split("\n").at(-1);
    if (!seed) throw new Error(`release:dry: there is no ${tag} tag and no commit that adds CHANGELOG.md to count from`);
    git(clone, "tag", "--annotate", "--message", tag, tag, seed);
  }
  const before = read(clone, "CHANGELOG.md");
  execFileSync(process.execPath, [lerna, "version", "--conventional-commits", "--no-git-tag-version", "--no-push", "--yes", "--loglevel", "error"], {
    cwd: clone,
    stdio: ["ignore", "inherit", "inherit"],
  });
  const next = versionIn(clone);
  if (next === current) {
    console.log(`release:dry: nothing to release since ${tag}`);
  } else {
    console.log(`release:dry: ${current} -> ${next}\n\nFiles it would change:\n${git(clone, "status", "--short")}`);
    console.log(`\nThe new entry of CHANGELOG.md:\n\n${newEntry(before, read(clone, "CHANGELOG.md"))}`);
  }
} finally {
  rmSync(clone, { recursive: true, force: true });
}

/** What lerna put between its header and the entries that were there before. */
function newEntry(before, after) {
  const body = (text) => text.slice(text.indexOf(COMMIT_GUIDELINE) + COMMIT_GUIDELINE.length).trim();
  const added = body(after);
  return added.slice(0, added.indexOf(body(before))).trim();
}
