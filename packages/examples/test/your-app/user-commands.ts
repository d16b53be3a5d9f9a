import { execFile } from "node:child_process";
import { join } from "node:path";

/** The repository root, from packages/examples/dist/test/your-app. */
export const REPOSITORY = join(__dirname, "..", "..", "..", "..", "..");

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
