import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where git finds an identity besides its configuration files. */
const IDENTITY_VARIABLES = ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"];

/** The environment of a machine whose git knows nobody, and the empty home it points at. */
export interface GitWithoutIdentity {
  readonly env: NodeJS.ProcessEnv;
  /** Removes the empty home. */
  remove(): void;
}

/**
 * This process's environment as a fresh machine (a new CI image) has it:
 * `HOME` a new empty folder, and git reading neither a system nor a global
 * configuration, so it has no `user.name` or `user.email` unless a command
 * brings its own. Anything that runs git here and would otherwise borrow
 * the developer's identity fails with git's `Committer identity unknown`.
 * `user.useConfigOnly` keeps git from making one up from the user and
 * host names, which it does on a host whose name has a domain: the
 * missing identity is missing on every machine.
 *
 * @example
 * ```ts
 * const machine = gitWithoutIdentity();
 * try {
 *   execFileSync(process.execPath, ["scripts/release-dry-run.mjs"], { env: machine.env });
 * } finally {
 *   machine.remove();
 * }
 * ```
 */
export function gitWithoutIdentity(): GitWithoutIdentity {
  const home = mkdtempSync(join(tmpdir(), "stint-empty-home-"));
  // An identity given by the environment would hide the missing one.
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !IDENTITY_VARIABLES.includes(name)));
  Object.assign(env, {
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "user.useConfigOnly",
    GIT_CONFIG_VALUE_0: "true",
  });
  return { env, remove: () => rmSync(home, { recursive: true, force: true }) };
}
