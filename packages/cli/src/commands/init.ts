import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { ExitCode } from "@stint/core";
import { configError } from "../cli-error";
import { flagOption, stringOption, type Command } from "../command";
import { appManifest, packageNameFor } from "../init/app-manifest";
import { packRunningPackages, tarballsIn, type StintTarball } from "../init/stint-packages";
import { copyTemplate, readManifestTemplate, type AppFlavour } from "../init/template-files";

/** Where `init` puts the stint tarballs it packs, inside the new application. */
const VENDOR = "vendor";

/** What may already be in the folder `init` writes to: a fresh `git init` is fine. */
const ALLOWED_BEFORE = new Set([".git"]);

/**
 * `stint init [dir]`: writes a small application that builds, tests and
 * runs as it stands — a job kind with its worker, the app module `stint run
 * --app` loads, an enqueue script, a unit test on the test kit, package.json
 * and (for TypeScript) a strict tsconfig. The stint packages come from
 * `vendor/`, packed from the ones this `stint` runs from, or from a folder
 * of tarballs (`--packages-from`); never from the registry, which does not
 * serve them.
 */
export const initCommand: Command = {
  name: "init",
  summary: "Write a new application with one job kind, its worker and a test, ready to run",
  usage: ["init [DIR] [--js] [--packages-from FOLDER]"],
  args: { min: 0, max: 1 },
  json: true,
  options: {
    js: { type: "boolean", description: "plain JavaScript (CommonJS, no build step, no decorators) instead of TypeScript" },
    "packages-from": {
      type: "string",
      value: "FOLDER",
      description: "depend on the stint tarballs in FOLDER (file: paths) instead of packing this stint's packages into DIR/vendor",
    },
  },
  notes: [
    "DIR (default: the current folder) must be empty or not exist yet; a .git folder is fine.",
    "The stint packages are not on the npm registry. By default init packs the ones this stint runs from into DIR/vendor and",
    "package.json depends on them as file:vendor/….tgz: commit vendor/ and CI installs the same bytes. --packages-from points",
    "at a folder of `npm pack` tarballs instead (e.g. one your team shares), by a relative file: path.",
    "Then: cd DIR && npm install && npm test (no database needed), and with DATABASE_URL set:",
    "npm run migrate && npm run enqueue -- 42 && npm run worker -- --once.",
  ],
  async run(context) {
    const flavour: AppFlavour = flagOption(context, "js") ? "js" : "ts";
    const target = resolve(context.cwd, context.positionals[0] ?? ".");
    assertEmptyFolder(target);
    const from = stringOption(context, "packages-from");
    // A folder of tarballs is checked before anything is written.
    const given = from === undefined ? undefined : tarballsIn(resolve(context.cwd, from));
    mkdirSync(target, { recursive: true });
    const written = copyTemplate(flavour, target);
    const tarballs = given ?? (await packRunningPackages(join(target, VENDOR)));
    const packages = fileDependencies(target, tarballs);
    const manifest = appManifest(packageNameFor(target), readManifestTemplate(flavour), packages);
    writeFileSync(join(target, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    written.push("package.json", ...(from === undefined ? tarballs.map((tarball) => `${VENDOR}/${tarball.file}`) : []));
    written.sort();

    if (context.json) {
      context.out.json({ directory: target, flavour, files: written, packages });
      return ExitCode.Ok;
    }
    const where = relative(context.cwd, target) || ".";
    context.out.line(`Wrote a ${flavour === "ts" ? "TypeScript" : "JavaScript"} stint application in ${where}:`);
    for (const file of written) context.out.line(`  ${file}`);
    context.out.line("");
    context.out.line("Next:");
    if (where !== ".") context.out.line(`  cd ${where}`);
    context.out.line("  npm install && npm test                 # no database needed");
    context.out.line("  export DATABASE_URL=postgres://…         # your PostgreSQL");
    context.out.line("  npm run migrate && npm run enqueue -- 42 && npm run worker -- --once");
    return ExitCode.Ok;
  },
};

function assertEmptyFolder(target: string): void {
  if (!existsSync(target)) return;
  const present = readdirSync(target).filter((entry) => !ALLOWED_BEFORE.has(entry));
  if (present.length > 0) {
    throw configError(`${target} is not empty (${present.slice(0, 5).join(", ")}${present.length > 5 ? ", …" : ""}); init writes into an empty or new folder`);
  }
}

/** The tarballs as `file:` dependencies, by paths relative to the application (so the folder can move with its vendor/). */
function fileDependencies(target: string, tarballs: readonly StintTarball[]): Record<string, string> {
  return Object.fromEntries(tarballs.map((tarball) => [tarball.name, `file:${relative(target, join(tarball.directory, tarball.file)).split("\\").join("/")}`]));
}
