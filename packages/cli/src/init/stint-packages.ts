import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { configError } from "../cli-error";

/** The stint packages an application installs; the dashboard only when this `stint` has it (the CLI runs without it). */
export const APP_PACKAGES = Object.freeze(["@stint/core", "@stint/postgres-driver", "@stint/cli"]);
const OPTIONAL_APP_PACKAGES = Object.freeze(["@stint/dashboard"]);

/** One stint package as an `npm pack` tarball. */
export interface StintTarball {
  readonly name: string;
  /** The tarball's file name, e.g. `stint-core-0.1.0.tgz`. */
  readonly file: string;
  /** The folder it is in. */
  readonly directory: string;
}

/**
 * Packs the stint packages this `stint` runs from (a checkout of the
 * repository, or an application that installed them) into `destination`
 * with `npm pack`, so the new application installs exactly these bytes.
 *
 * @example
 * ```ts
 * await packRunningPackages("/home/me/my-app/vendor"); // [{ name: "@stint/core", file: "stint-core-0.1.0.tgz", … }, …]
 * ```
 */
export async function packRunningPackages(destination: string): Promise<StintTarball[]> {
  const packages = [...APP_PACKAGES.map((name) => ({ name, directory: installedPackageDir(name) })), ...optionalPackages()];
  mkdirSync(destination, { recursive: true });
  const { stdout } = await promisify(execFile)("npm", ["pack", "--json", "--pack-destination", destination, ...packages.map((found) => found.directory)], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const packed = JSON.parse(stdout) as { name: string; filename: string }[];
  return packed.map((entry) => ({ name: entry.name, file: entry.filename, directory: destination }));
}

/**
 * The tarballs of the stint packages in `directory` (as `npm pack` names
 * them: `stint-core-0.1.0.tgz`): one per package, the dashboard if it is
 * there. A missing package, or two versions of one, is a configuration
 * error naming the folder.
 *
 * @example
 * ```ts
 * tarballsIn("/home/me/stint-tarballs");
 * ```
 */
export function tarballsIn(directory: string): StintTarball[] {
  if (!existsSync(directory)) throw configError(`--packages-from ${directory}: no such folder`);
  const files = readdirSync(directory);
  const found: StintTarball[] = [];
  for (const name of [...APP_PACKAGES, ...OPTIONAL_APP_PACKAGES]) {
    const pattern = new RegExp(`^${tarballPrefix(name)}-\\d+\\.\\d+\\.\\d+(?:-[\\w.]+)?\\.tgz$`);
    const matches = files.filter((file) => pattern.test(file));
    if (matches.length > 1) throw configError(`--packages-from ${directory}: more than one tarball of ${name} (${matches.join(", ")}); keep one`);
    const file = matches[0];
    if (file !== undefined) found.push({ name, file, directory });
    else if (APP_PACKAGES.includes(name))
      throw configError(`--packages-from ${directory}: no tarball of ${name} (npm pack names it ${tarballPrefix(name)}-<version>.tgz)`);
  }
  return found;
}

/** How `npm pack` begins the file name of a scoped package's tarball: `@stint/core` → `stint-core`. */
function tarballPrefix(name: string): string {
  return name.replace(/^@/, "").replace("/", "-");
}

function optionalPackages(): { name: string; directory: string }[] {
  return OPTIONAL_APP_PACKAGES.flatMap((name) => {
    try {
      return [{ name, directory: installedPackageDir(name) }];
    } catch {
      return [];
    }
  });
}

/** The folder of the installed package `name`, found from its entry point (its exports map does not expose package.json). */
function installedPackageDir(name: string): string {
  let directory = dirname(require.resolve(name));
  while (dirname(directory) !== directory) {
    const manifest = join(directory, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === name) return directory;
    directory = dirname(directory);
  }
  throw configError(`cannot find the folder of ${name} above ${require.resolve(name)}`);
}
