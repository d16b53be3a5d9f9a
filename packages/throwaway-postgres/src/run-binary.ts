import { execFile } from "node:child_process";
import { basename } from "node:path";
import type { ServerUser } from "./server-user";

/** How a server binary is run. */
export interface RunBinaryOptions {
  /** Run as this user (root only); as the current user when undefined. */
  readonly user: ServerUser | undefined;
  /** The working directory; one the user can enter. */
  readonly cwd: string;
  /** Killed and rejected after this long. */
  readonly timeoutMs: number;
}

/**
 * Runs a PostgreSQL binary and resolves when it exits 0; rejects with an
 * error whose message is one line saying why not (a spawn failure such as
 * `EACCES`, a timeout, or the binary's own error line). Every outcome of
 * the child, its `'error'` event included, ends in one of the two.
 *
 * @example
 * await runBinary("/…/native/bin/initdb", ["-D", dataDir], { user: undefined, cwd: root, timeoutMs: 90_000 });
 */
export function runBinary(binary: string, args: readonly string[], options: RunBinaryOptions): Promise<void> {
  const ids = options.user === undefined ? {} : { uid: options.user.uid, gid: options.user.gid };
  return new Promise((resolve, reject) => {
    execFile(binary, [...args], { ...ids, cwd: options.cwd, timeout: options.timeoutMs }, (error, _stdout, stderr) => {
      if (error === null) resolve();
      else reject(new Error(failureReason(binary, args, error, stderr, options.timeoutMs)));
    });
  });
}

/** The spawn error code (`EACCES`, `ENOENT`) when the binary could not be started at all. */
export function spawnErrorCode(error: unknown): string | undefined {
  const code = (error as { readonly code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function failureReason(binary: string, args: readonly string[], error: Error & { readonly killed?: boolean }, stderr: string, timeoutMs: number): string {
  const name = basename(binary);
  const code = spawnErrorCode(error);
  if (code !== undefined) return `cannot run ${binary} (${code})`;
  if (error.killed === true) return `${name} ${args[0] ?? ""} did not finish within ${timeoutMs / 1_000} s`;
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const telling = lines.find((line) => /error:|FATAL|could not/i.test(line)) ?? lines[0] ?? error.message;
  return `${name} failed: ${telling.startsWith(`${name}: `) ? telling.slice(name.length + 2) : telling}`;
}
