import { expect } from "chai";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** packages/examples, from dist/test. */
const PACKAGE_DIR = join(__dirname, "..", "..");

interface Snippet {
  readonly source: string | undefined;
  readonly code: string;
  readonly line: number;
}

/** The fenced blocks of `language` (`ts`, `json`, …), each with the file its `<!-- from: … -->` line names. */
function snippets(markdown: string, language: string): Snippet[] {
  const found: Snippet[] = [];
  const pattern = new RegExp(`(?:<!-- from: (\\S+) -->\\n)?\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, "g");
  for (let match = pattern.exec(markdown); match !== null; match = pattern.exec(markdown)) {
    found.push({ source: match[1], code: match[2] ?? "", line: markdown.slice(0, match.index).split("\n").length });
  }
  return found;
}

/**
 * The text without its layout: no whitespace, and no comma right before a
 * closing bracket or at the end. An excerpt still matches its source when it is indented
 * differently or broken over lines differently: Prettier formats the source
 * but not the Markdown, and adds a trailing comma to a list it breaks.
 */
function withoutLayout(text: string): string {
  return text.replace(/,(\s*(?:[)\]}]|$))/g, "$1").replace(/\s+/g, "");
}

const REPOSITORY = join(PACKAGE_DIR, "..", "..");

/**
 * The documents whose snippets are checked, each with the folder its
 * `from:` paths start at and the languages of the blocks that must come
 * from a file (the guides in docs/ show configuration files too).
 */
const DOCUMENTS = [
  { name: "packages/examples/README.md", file: join(PACKAGE_DIR, "README.md"), base: PACKAGE_DIR, languages: ["ts"], atLeast: 4 },
  { name: "packages/core/README.md", file: join(REPOSITORY, "packages", "core", "README.md"), base: REPOSITORY, languages: ["ts"], atLeast: 2 },
  {
    name: "packages/postgres-driver/README.md",
    file: join(REPOSITORY, "packages", "postgres-driver", "README.md"),
    base: REPOSITORY,
    languages: ["ts"],
    atLeast: 1,
  },
  { name: "README.md", file: join(REPOSITORY, "README.md"), base: REPOSITORY, languages: ["ts", "yaml"], atLeast: 4 },
  { name: "packages/dashboard/README.md", file: join(REPOSITORY, "packages", "dashboard", "README.md"), base: REPOSITORY, languages: ["ts"], atLeast: 2 },
  ...readdirSync(join(REPOSITORY, "docs"))
    .filter((file) => file.endsWith(".md"))
    .map((file) => ({ name: `docs/${file}`, file: join(REPOSITORY, "docs", file), base: REPOSITORY, languages: ["ts", "json"], atLeast: 1 })),
];

for (const { name, file, base, languages, atLeast } of DOCUMENTS) {
  describe(`the snippets of ${name}`, () => {
    const readme = readFileSync(file, "utf8");
    const checked = (): Snippet[] => languages.flatMap((language) => snippets(readme, language));

    it("has TypeScript snippets to check", () => {
      expect(snippets(readme, "ts")).to.have.length.of.at.least(atLeast);
    });

    it(`copies every ${languages.join(" and ")} snippet from a file of the repository, unchanged`, () => {
      for (const snippet of checked()) {
        expect(snippet.source, `snippet at ${name}:${snippet.line} names no source file`).to.be.a("string");
        const source = readFileSync(join(base, snippet.source!), "utf8");
        expect(withoutLayout(source).includes(withoutLayout(snippet.code)), `snippet at ${name}:${snippet.line} differs from ${snippet.source}`).to.equal(true);
      }
    });
  });
}
