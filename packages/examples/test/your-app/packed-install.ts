import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** The repository root, from packages/examples/dist/test/your-app. */
export const REPOSITORY = join(__dirname, "..", "..", "..", "..", "..");

/** The library packages an application installs. */
export const LIBRARY_WORKSPACES = Object.freeze(["@stint/core", "@stint/postgres-driver", "@stint/dashboard", "@stint/cli"]);

/** What a finished command printed. */
export interface CommandOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The environment of a command run as a user would run it: without the
 * `npm_*` variables that `npm test` sets for its scripts (they would point a
 * nested npm at this repository), but with npm's cache, so packages already
 * downloaded for the repository are not fetched again.
 */
export function userEnvironment(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.toLowerCase().startsWith("npm_")) env[name] = value;
  const cache = process.env["npm_config_cache"];
  if (cache !== undefined) env["npm_config_cache"] = cache;
  return { ...env, ...extra };
}

/**
 * Runs `command` in `cwd` and resolves to its output; rejects with the
 * command line and everything it printed when it fails or outlives `timeoutMs`.
 *
 * @example
 * ```ts
 * const { stdout } = await runCommand("npx", ["--no", "--", "stint", "--help"], appDir);
 * ```
 */
export function runCommand(
  command: string,
  args: readonly string[],
  cwd: string,
  options: { readonly env?: NodeJS.ProcessEnv; readonly timeoutMs?: number } = {},
): Promise<CommandOutput> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd, env: options.env ?? userEnvironment(), timeout: options.timeoutMs ?? 120_000, maxBuffer: 16 * 1024 * 1024, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`\`${[command, ...args].join(" ")}\` in ${cwd} failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolve({ stdout, stderr });
      },
    );
  });
}

/**
 * Packs the library packages as `npm pack` would for a release and returns
 * the tarballs' paths (the packages must be built).
 *
 * @example
 * ```ts
 * const tarballs = await packLibraries(join(work, "tarballs"));
 * ```
 */
export async function packLibraries(destination: string): Promise<readonly string[]> {
  mkdirSync(destination, { recursive: true });
  const workspaces = LIBRARY_WORKSPACES.flatMap((name) => ["--workspace", name]);
  await runCommand("npm", ["pack", "--pack-destination", destination, "--silent", ...workspaces], REPOSITORY);
  return readdirSync(destination)
    .filter((file) => file.endsWith(".tgz"))
    .map((file) => join(destination, file));
}

/**
 * Copies the application at `source` (its package.json, tsconfig.json and
 * src/) to `appDir` and installs the tarballs into it with its own
 * dependencies from the registry, as the guide says.
 *
 * @example
 * ```ts
 * await installApp(YOUR_APP, join(work, "app"), tarballs);
 * ```
 */
export async function installApp(source: string, appDir: string, tarballs: readonly string[]): Promise<void> {
  for (const entry of ["package.json", "tsconfig.json", "src"]) cpSync(join(source, entry), join(appDir, entry), { recursive: true });
  await runCommand("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...tarballs], appDir, { timeoutMs: 150_000 });
}
