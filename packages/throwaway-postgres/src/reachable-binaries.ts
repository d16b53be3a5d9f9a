import { execFile } from "node:child_process";
import { chmodSync, cpSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { binariesIn, type PostgresBinaries } from "./postgres-binaries";
import { spawnErrorCode } from "./run-binary";
import type { ServerUser } from "./server-user";

/** Binaries the server's user can run, and a notice when they had to be copied. */
export interface ReachableBinaries {
  readonly binaries: PostgresBinaries;
  /** One line saying that, and why, the server runs from a copy; undefined when it does not. */
  readonly notice: string | undefined;
}

/**
 * Makes sure `user` can run the binaries. Running as root, the server runs
 * as the `postgres` user, which cannot run binaries under a directory it
 * cannot enter (a clone in `/root/…` or in a `mktemp -d` directory, both
 * 0700). Whether it can is found out truthfully, by running `initdb
 * --version` as that user; when it cannot, `bin/`, `lib/` and `share/` are
 * copied (symbolic links as they are) into `<scratch>/postgresql`, which the
 * caller removes with `scratch`.
 *
 * @example
 * const { binaries, notice } = await reachableBinaries(found, serverUser(), root);
 * if (notice) console.error(`with-postgres: ${notice}`);
 */
export async function reachableBinaries(binaries: PostgresBinaries, user: ServerUser | undefined, scratch: string): Promise<ReachableBinaries> {
  if (user === undefined || (await canRun(binaries.initdb, user, scratch))) return { binaries, notice: undefined };
  const copyDir = join(scratch, "postgresql");
  cpSync(realpathSync(binaries.dir), copyDir, { recursive: true, verbatimSymlinks: true });
  chmodSync(copyDir, 0o755);
  const copy = binariesIn(copyDir);
  if (!(await canRun(copy.initdb, user, scratch))) {
    throw new Error(`the ${user.name} user can run neither ${binaries.initdb} nor a copy of it in ${copyDir}`);
  }
  const notice = `the ${user.name} user cannot reach ${binaries.dir} (${blockingDirectory(binaries.initdb, user)}); running PostgreSQL from a copy in ${copyDir}`;
  return { binaries: copy, notice };
}

/** Runs `binary --version` as `user`: false when the system refuses to start it (EACCES), true when it runs. */
function canRun(binary: string, user: ServerUser, cwd: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    execFile(binary, ["--version"], { uid: user.uid, gid: user.gid, cwd, timeout: 30_000 }, (error) => {
      if (error === null) resolve(true);
      else if (spawnErrorCode(error) === "EACCES") resolve(false);
      else reject(new Error(`${binary} --version failed as the ${user.name} user: ${error.message.split("\n")[0]}`));
    });
  });
}

/** The first directory on the way to `path` that `user` may not enter, as "`/root` is 0700". */
function blockingDirectory(path: string, user: ServerUser): string {
  const ancestors: string[] = [];
  for (let dir = dirname(path); ancestors[0] !== dir; dir = dirname(dir)) ancestors.unshift(dir);
  for (const dir of ancestors) {
    const { mode, uid, gid } = statSync(dir);
    const searchBit = uid === user.uid ? 0o100 : gid === user.gid ? 0o010 : 0o001;
    if ((mode & searchBit) === 0) return `${dir} is ${(mode & 0o7777).toString(8).padStart(4, "0")}`;
  }
  return `execute permission on ${path} is denied`;
}
