import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { expect } from "chai";
import { headingSlug, markdownAnchors, markdownLinks } from "./markdown-links";

/** The repository root, from packages/examples/dist/test/repository. */
const REPOSITORY = join(__dirname, "..", "..", "..", "..", "..");

/** Folders that hold no hand-written documentation. */
const SKIPPED_FOLDERS = new Set(["node_modules", "dist", ".git"]);

/** The hand-written markdown files of the repository, as paths from its root (CHANGELOG.md files are written by lerna-lite). */
function markdownFiles(folder = REPOSITORY): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : markdownFiles(join(folder, entry.name));
    if (!entry.name.endsWith(".md") || entry.name === "CHANGELOG.md") return [];
    return [relative(REPOSITORY, join(folder, entry.name)).split(sep).join("/")];
  });
}

/** What is wrong with one relative link of `file`, or `undefined` when it resolves. */
function brokenLink(file: string, target: string): string | undefined {
  const [pathPart = "", anchor] = target.split("#", 2);
  const path = decodeURIComponent(pathPart);
  const resolved =
    path === ""
      ? file
      : relative(REPOSITORY, join(REPOSITORY, dirname(file), path))
          .split(sep)
          .join("/");
  if (resolved.startsWith("../")) return `${target} leaves the repository`;
  const absolute = join(REPOSITORY, resolved);
  if (!existsSync(absolute)) return `${target}: ${resolved} does not exist`;
  if (anchor === undefined || anchor === "") return undefined;
  if (statSync(absolute).isDirectory() || !resolved.endsWith(".md")) return `${target}: an anchor into something that is not a markdown file`;
  const anchors = markdownAnchors(readFileSync(absolute, "utf8"));
  return anchors.has(anchor) ? undefined : `${target}: ${resolved} has no heading #${anchor}`;
}

describe("links between the documents", () => {
  it("slug headings as GitHub does", () => {
    expect(headingSlug('Leases, heartbeats and what "at least once" means')).to.equal("leases-heartbeats-and-what-at-least-once-means");
    expect(headingSlug("Dead jobs: `onDead`")).to.equal("dead-jobs-ondead");
    expect(headingSlug("5. Write a worker")).to.equal("5-write-a-worker");
    expect(headingSlug("The `stint` command")).to.equal("the-stint-command");
    expect(headingSlug("`jobs wait`")).to.equal("jobs-wait");
    expect(headingSlug("Retries [and](x.md) failures_2")).to.equal("retries-and-failures_2");
  });

  it("find headings and links outside code only, and number repeated headings", () => {
    const markdown = [
      "# Setup",
      "",
      'See [one](a.md#setup) and ![two](b.png "title"), not `[three](c.md)`.',
      "```sh",
      "# not a heading",
      "[four](d.md)",
      "```",
      "## Setup",
      '<a id="kept"></a>',
    ].join("\n");
    expect(markdownLinks(markdown)).to.deep.equal([
      { target: "a.md#setup", line: 3 },
      { target: "b.png", line: 3 },
    ]);
    expect([...markdownAnchors(markdown)]).to.deep.equal(["setup", "setup-1", "kept"]);
  });

  it("tells a broken link or anchor from one that resolves", () => {
    expect(brokenLink("README.md", "docs/failures.md#dead-jobs-ondead")).to.equal(undefined);
    expect(brokenLink("docs/failures.md", "#retries-and-failures")).to.equal(undefined);
    expect(brokenLink("docs/failures.md", "#no-such-heading")).to.equal("#no-such-heading: docs/failures.md has no heading #no-such-heading");
    expect(brokenLink("docs/README.md", "missing.md")).to.equal("missing.md: docs/missing.md does not exist");
    expect(brokenLink("README.md", "../elsewhere.md")).to.equal("../elsewhere.md leaves the repository");
  });

  const files = markdownFiles();

  it("are checked in the README, the guides and every package README", () => {
    expect(files).to.include.members(["README.md", "docs/README.md", "docs/guarantees.md", "ARCHITECTURE.md", "packages/core/README.md"]);
  });

  for (const file of files) {
    it(`resolve in ${file}, anchors included`, () => {
      const broken = markdownLinks(readFileSync(join(REPOSITORY, file), "utf8"))
        .filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith("//"))
        .flatMap(({ target, line }) => {
          const problem = brokenLink(file, target);
          return problem === undefined ? [] : [`${file}:${line}: ${problem}`];
        });
      expect(broken).to.deep.equal([]);
    });
  }
});
