import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The version of this CLI, read from its package.json (which npm ships with
 * every package, next to `dist/`).
 *
 * @example
 * ```ts
 * cliVersion(); // "0.1.0"
 * ```
 */
export function cliVersion(): string {
  // Compiled to dist/src/version.js: the manifest is two folders up.
  const manifest = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as { version?: unknown };
  if (typeof manifest.version !== "string") throw new Error("the package.json of @stint/cli has no version");
  return manifest.version;
}
