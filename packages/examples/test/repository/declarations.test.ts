import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect } from "chai";
import ts from "typescript";

/** The repository root, from packages/examples/dist/test/repository. */
const REPOSITORY = join(__dirname, "..", "..", "..", "..", "..");

interface Manifest {
  readonly name: string;
  readonly private?: boolean;
  readonly workspaces?: readonly string[];
  readonly exports?: Readonly<Record<string, { readonly types?: string }>>;
}

interface EntryPoint {
  /** What an application writes in its import: `@stint/core/testing`. */
  readonly specifier: string;
  /** The declaration file the package's `exports` map names for it. */
  readonly declarations: string;
}

function manifest(folder: string): Manifest {
  return JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as Manifest;
}

/** The published packages (every workspace that is not private), each with its folder. */
const libraries = (manifest(REPOSITORY).workspaces ?? [])
  .map((folder) => ({ folder: join(REPOSITORY, folder), manifest: manifest(join(REPOSITORY, folder)) }))
  .filter(({ manifest: { private: isPrivate } }) => isPrivate !== true);

/** Every entry point of every published package, from its `exports` map. */
const entryPoints: readonly EntryPoint[] = libraries.flatMap(({ folder, manifest: library }) =>
  Object.entries(library.exports ?? {}).map(([subpath, target]) => ({
    specifier: subpath === "." ? library.name : `${library.name}/${subpath.slice(2)}`,
    declarations: join(folder, target.types ?? "(no types)"),
  })),
);

/**
 * The strictest settings an application commonly compiles with, and the
 * ones that read a package as Node does: its `exports` map, CommonJS.
 * `skipLibCheck: false` checks every declaration file the program loads.
 * No DOM: a server application's globals are Node's.
 */
const APPLICATION_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2022.d.ts"],
  module: ts.ModuleKind.Node16,
  moduleResolution: ts.ModuleResolutionKind.Node16,
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: false,
  types: ["node"],
  noEmit: true,
};

/**
 * An application in a temporary folder that imports every entry point by
 * its package name: `node_modules/@stint/*` link to the packages (their
 * own dependencies resolve from the repository's `node_modules`, as from
 * an installed package's), and `@types/node` is the repository's.
 */
function applicationImportingEverything(folder: string): string {
  for (const { folder: packageFolder, manifest: library } of libraries) {
    const link = join(folder, "node_modules", ...library.name.split("/"));
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(packageFolder, link, "dir");
  }
  mkdirSync(join(folder, "node_modules", "@types"), { recursive: true });
  symlinkSync(join(REPOSITORY, "node_modules", "@types", "node"), join(folder, "node_modules", "@types", "node"), "dir");
  writeFileSync(join(folder, "package.json"), JSON.stringify({ name: "declarations-check", private: true }));
  const main = join(folder, "main.ts");
  writeFileSync(main, entryPoints.map(({ specifier }, index) => `export * as entry${index} from "${specifier}";\n`).join(""));
  return main;
}

describe("the published packages' declaration files", function () {
  // One program over every declaration file of the four packages and their dependencies: about ten seconds.
  this.timeout(60_000);

  let folder: string;
  before(() => {
    folder = mkdtempSync(join(tmpdir(), "stint-declarations-"));
  });
  after(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  it("know every entry point of the published packages", () => {
    expect(entryPoints.map(({ specifier }) => specifier)).to.include.members([
      "@stint/core",
      "@stint/core/driver",
      "@stint/core/testing",
      "@stint/postgres-driver",
      "@stint/cli",
      "@stint/dashboard",
    ]);
  });

  it("type-check in an application under strict, exactOptionalPropertyTypes and skipLibCheck: false, with the pinned TypeScript", () => {
    const main = applicationImportingEverything(folder);
    const host = ts.createCompilerHost(APPLICATION_OPTIONS);
    const program = ts.createProgram({ rootNames: [main], options: APPLICATION_OPTIONS, host });

    const loaded = new Set(program.getSourceFiles().map((file) => ts.sys.realpath?.(file.fileName) ?? file.fileName));
    for (const { specifier, declarations } of entryPoints) {
      expect(loaded.has(declarations), `${specifier} resolves to ${declarations}, as its exports map says`).to.equal(true);
    }
    const problems = ts.formatDiagnostics(ts.getPreEmitDiagnostics(program), {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => REPOSITORY,
      getNewLine: () => "\n",
    });
    expect(problems, `TypeScript ${ts.version} reports`).to.equal("");
  });
});
