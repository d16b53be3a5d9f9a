import { expect } from "chai";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";

/** packages/examples, from dist/test. */
const PACKAGE_DIR = join(__dirname, "..", "..");

interface Snippet {
  readonly language: string;
  readonly source: string | undefined;
  readonly code: string;
  readonly line: number;
}

/** Every fenced block with a language, each with the file its `<!-- from: … -->` line names, if any. */
function snippets(markdown: string): Snippet[] {
  const found: Snippet[] = [];
  const pattern = /(?:<!-- from: (\S+) -->\n)?```(\w+)\n([\s\S]*?)```/g;
  for (let match = pattern.exec(markdown); match !== null; match = pattern.exec(markdown)) {
    found.push({ source: match[1], language: match[2] ?? "", code: match[3] ?? "", line: markdown.slice(0, match.index).split("\n").length });
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
 * How many TypeScript snippets each guide in docs/ has at least; a guide
 * not named here must have one. Guides of prose and tables have none.
 */
const GUIDE_SNIPPETS: Readonly<Record<string, number>> = {
  "README.md": 0,
  "benchmarks.md": 0,
  "configuration.md": 0,
  "development.md": 0,
  "enqueue-from-sql.md": 0,
  "failures.md": 2,
  "guarantees.md": 2,
  "metrics.md": 1,
  "observability.md": 2,
  "operating.md": 4,
  "running-in-production.md": 2,
  "schema.md": 0,
  "security.md": 0,
  "use-in-your-app.md": 4,
  "writing-jobs.md": 0,
};

/** Where snippets must not come from: the benchmarks and the process tests' probes, which are not code a user learns from. */
const NOT_SNIPPET_SOURCES = ["packages/bench/", "packages/process-tests/"];

/**
 * The documents whose snippets are checked, each with the folder its
 * `from:` paths start at, the languages of the blocks that must come from
 * a file (the guides in docs/ also show configuration for tools outside
 * the repository, such as Prometheus rules), and how many TypeScript
 * snippets it has at least. A block of any language that names a source
 * is checked against it.
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
  { name: "README.md", file: join(REPOSITORY, "README.md"), base: REPOSITORY, languages: ["ts", "yaml"], atLeast: 6 },
  { name: "packages/dashboard/README.md", file: join(REPOSITORY, "packages", "dashboard", "README.md"), base: REPOSITORY, languages: ["ts"], atLeast: 2 },
  ...readdirSync(join(REPOSITORY, "docs"))
    .filter((file) => file.endsWith(".md"))
    .map((file) => ({
      name: `docs/${file}`,
      file: join(REPOSITORY, "docs", file),
      base: REPOSITORY,
      languages: ["ts", "json"],
      atLeast: GUIDE_SNIPPETS[file] ?? 1,
    })),
];

describe("the snippet checks", () => {
  it("find fenced blocks of every language with the source named above them", () => {
    const markdown = ["<!-- from: a.ts -->", "```ts", "const a = 1;", "```", "", "```yaml", "b: 2", "```", ""].join("\n");
    expect(snippets(markdown)).to.deep.equal([
      { source: "a.ts", language: "ts", code: "const a = 1;\n", line: 1 },
      { source: undefined, language: "yaml", code: "b: 2\n", line: 6 },
    ]);
  });

  it("know every guide of docs/ that has no TypeScript snippet", () => {
    const guides = readdirSync(join(REPOSITORY, "docs")).filter((file) => file.endsWith(".md"));
    const unknown = Object.keys(GUIDE_SNIPPETS).filter((file) => !guides.includes(file));
    expect(unknown, "guides named in GUIDE_SNIPPETS that docs/ does not have").to.deep.equal([]);
  });
});

for (const { name, file, base, languages, atLeast } of DOCUMENTS) {
  describe(`the snippets of ${name}`, () => {
    const readme = readFileSync(file, "utf8");
    const found = snippets(readme);

    if (atLeast > 0) {
      it("has TypeScript snippets to check", () => {
        expect(found.filter((snippet) => snippet.language === "ts")).to.have.length.of.at.least(atLeast);
      });
    }

    it(`copies every ${languages.join(" and ")} snippet, and every snippet that names a source, from a file of the repository, unchanged`, () => {
      for (const snippet of found.filter((block) => block.source !== undefined || languages.includes(block.language))) {
        expect(snippet.source, `snippet at ${name}:${snippet.line} names no source file`).to.be.a("string");
        const source = readFileSync(join(base, snippet.source!), "utf8");
        expect(withoutLayout(source).includes(withoutLayout(snippet.code)), `snippet at ${name}:${snippet.line} differs from ${snippet.source}`).to.equal(true);
      }
    });

    it("copies no snippet from the benchmark or the test probes", () => {
      const sources = found.map((snippet) =>
        relative(REPOSITORY, join(base, snippet.source ?? "."))
          .split(sep)
          .join("/"),
      );
      expect(sources.filter((source) => NOT_SNIPPET_SOURCES.some((folder) => source.startsWith(folder)))).to.deep.equal([]);
    });
  });
}
