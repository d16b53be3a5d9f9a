import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";

/** The repository root, from packages/examples/dist/test/repository. */
const REPOSITORY = join(__dirname, "..", "..", "..", "..", "..");

/**
 * The backticked spans of `markdown` that name a file or folder from the
 * repository root: a run of name characters with a `/` in it, or ending in
 * a file extension (`lerna.json`). Spans with spaces, parentheses or
 * placeholders (`client.enqueue(kind, payload)`, `<!-- from: … -->`) are not paths.
 */
function backtickedPaths(markdown: string): string[] {
  const spans = [...markdown.matchAll(/`([^`\n]+)`/g)].map((match) => match[1] ?? "");
  return spans.filter((span) => /^[\w@.-]+(?:\/[\w@.-]+)*\/?$/.test(span) && (span.includes("/") || /\.(?:ts|mjs|js|json|md|sql)$/.test(span)));
}

describe("ARCHITECTURE.md", () => {
  const markdown = readFileSync(join(REPOSITORY, "ARCHITECTURE.md"), "utf8");

  it("finds paths in backticks and leaves other code spans alone", () => {
    expect(backtickedPaths("`packages/core/src/index.ts`, `lerna.json`, `packages/cli/src/commands/`, `ctx.once`, `npm run lint`, `FOR UPDATE`")).to.deep.equal(
      ["packages/core/src/index.ts", "lerna.json", "packages/cli/src/commands/"],
    );
  });

  it("names only files and folders that exist", () => {
    const paths = backtickedPaths(markdown);
    expect(paths.length, "paths found in ARCHITECTURE.md").to.be.at.least(60);
    const missing = paths.filter((path) => !existsSync(join(REPOSITORY, path)));
    expect(missing, "paths in ARCHITECTURE.md that do not exist").to.deep.equal([]);
  });
});
