import { expect } from "chai";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** packages/examples, from dist/test. */
const PACKAGE_DIR = join(__dirname, "..", "..");

interface Snippet {
  readonly source: string | undefined;
  readonly code: string;
  readonly line: number;
}

function snippets(markdown: string): Snippet[] {
  const found: Snippet[] = [];
  const pattern = /(?:<!-- from: (\S+) -->\n)?```ts\n([\s\S]*?)```/g;
  for (let match = pattern.exec(markdown); match !== null; match = pattern.exec(markdown)) {
    found.push({ source: match[1], code: match[2] ?? "", line: markdown.slice(0, match.index).split("\n").length });
  }
  return found;
}

/** Lines without indentation and blank lines, so re-indented excerpts still match. */
function normalised(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

function containsRun(haystack: readonly string[], needle: readonly string[]): boolean {
  for (let start = 0; start + needle.length <= haystack.length; start += 1) {
    if (needle.every((line, offset) => haystack[start + offset] === line)) return true;
  }
  return false;
}

/** The READMEs whose snippets are checked, each with the folder its `from:` paths start at. */
const READMES = [
  { name: "packages/examples/README.md", file: join(PACKAGE_DIR, "README.md"), base: PACKAGE_DIR },
  { name: "README.md", file: join(PACKAGE_DIR, "..", "..", "README.md"), base: join(PACKAGE_DIR, "..", "..") },
];

for (const { name, file, base } of READMES) {
  describe(`the snippets of ${name}`, () => {
    const readme = readFileSync(file, "utf8");

    it("has TypeScript snippets to check", () => {
      expect(snippets(readme)).to.have.length.greaterThan(3);
    });

    it("copies every TypeScript snippet from a file of the repository, unchanged", () => {
      for (const snippet of snippets(readme)) {
        expect(snippet.source, `snippet at ${name}:${snippet.line} names no source file`).to.be.a("string");
        const source = readFileSync(join(base, snippet.source!), "utf8");
        expect(containsRun(normalised(source), normalised(snippet.code)), `snippet at ${name}:${snippet.line} differs from ${snippet.source}`).to.equal(
          true,
        );
      }
    });
  });
}
