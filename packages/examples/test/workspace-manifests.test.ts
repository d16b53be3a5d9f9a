import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import ts from "typescript";

/** The repository root, from packages/examples/dist/test. */
const REPOSITORY = join(__dirname, "..", "..", "..", "..");

interface Manifest {
  readonly name: string;
  readonly private?: boolean;
  readonly engines?: { readonly node?: string };
  readonly workspaces?: readonly string[];
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly exports?: Readonly<Record<string, { readonly types?: string }>>;
}

function manifest(folder: string): Manifest {
  return JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as Manifest;
}

const root = manifest(REPOSITORY);
const workspaces = (root.workspaces ?? []).map((folder) => ({ folder, manifest: manifest(join(REPOSITORY, folder)) }));
/** What an application installs: everything that is not private. */
const libraries = workspaces.filter(({ manifest: { private: isPrivate } }) => isPrivate !== true);
/** One container and one polyfill per application: these must come from the application. */
const SHARED_WITH_THE_APP = ["tsyringe", "reflect-metadata"];

describe("the workspaces' package.json files", () => {
  it("declare the root's Node version, and each has a README", () => {
    expect(root.engines?.node).to.equal(">=20.19");
    expect(workspaces).to.have.length.of.at.least(5);
    for (const { folder, manifest: workspace } of workspaces) {
      expect(workspace.engines?.node, `${folder}/package.json engines.node`).to.equal(root.engines?.node);
      expect(existsSync(join(REPOSITORY, folder, "README.md")), `${folder}/README.md`).to.equal(true);
    }
  });

  it("make tsyringe and reflect-metadata peer dependencies of the libraries, never their own", () => {
    expect(libraries.map(({ manifest: { name } }) => name)).to.include.members(["@stint/core", "@stint/postgres-driver", "@stint/cli"]);
    for (const { folder, manifest: library } of libraries) {
      for (const shared of SHARED_WITH_THE_APP) {
        expect(library.peerDependencies?.[shared], `${folder}: peerDependencies.${shared}`).to.be.a("string");
        expect(library.dependencies?.[shared], `${folder}: dependencies.${shared}`).to.equal(undefined);
      }
    }
  });

  it("let TypeScript find every entry point's types with the node10, node16 and bundler module resolutions", () => {
    // An application still on `moduleResolution: "node"` (node10) ignores `exports`: typesVersions maps the subpaths for it.
    const from = join(REPOSITORY, "package.json");
    const resolutions = [ts.ModuleResolutionKind.Node10, ts.ModuleResolutionKind.Node16, ts.ModuleResolutionKind.Bundler];
    let subpaths = 0;
    for (const { folder, manifest: library } of libraries) {
      for (const [subpath, target] of Object.entries(library.exports ?? {})) {
        const specifier = subpath === "." ? library.name : `${library.name}/${subpath.slice(2)}`;
        const expected = join(REPOSITORY, folder, target.types ?? "");
        for (const moduleResolution of resolutions) {
          const module = moduleResolution === ts.ModuleResolutionKind.Node16 ? ts.ModuleKind.Node16 : ts.ModuleKind.ESNext;
          const found = ts.resolveModuleName(specifier, from, { moduleResolution, module }, ts.sys).resolvedModule?.resolvedFileName;
          expect(found, `${specifier} with moduleResolution ${ts.ModuleResolutionKind[moduleResolution]}`).to.equal(expected);
        }
        if (subpath !== ".") subpaths += 1;
      }
    }
    expect(subpaths, "subpath entry points (@stint/core/driver at least)").to.be.at.least(1);
  });

  it("ask for the same version range of each dependency everywhere", () => {
    const ranges = new Map<string, Set<string>>();
    for (const { manifest: workspace } of [{ manifest: root }, ...workspaces]) {
      for (const [name, range] of Object.entries({ ...workspace.devDependencies, ...workspace.peerDependencies, ...workspace.dependencies })) {
        ranges.set(name, (ranges.get(name) ?? new Set()).add(range));
      }
    }
    const differing = [...ranges].filter(([, found]) => found.size > 1).map(([name, found]) => `${name}: ${[...found].join(", ")}`);
    expect(differing).to.deep.equal([]);
  });
});
