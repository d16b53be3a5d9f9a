import { basename } from "node:path";

/**
 * The `package.json` of a new application: its name, then the template's
 * fields, with the stint packages added to its dependencies (sorted, as npm
 * writes them).
 *
 * @example
 * ```ts
 * appManifest("my-app", template, { "@stint/core": "file:vendor/stint-core-0.1.0.tgz" });
 * ```
 */
export function appManifest(
  name: string,
  template: Readonly<Record<string, unknown>>,
  stintDependencies: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const dependencies = { ...(template["dependencies"] as Record<string, string> | undefined), ...stintDependencies };
  return { name, ...template, dependencies: Object.fromEntries(Object.entries(dependencies).sort(([a], [b]) => a.localeCompare(b))) };
}

/**
 * A valid npm package name made from a folder's name: lower case, with
 * what npm refuses in a name replaced by `-`.
 *
 * @example
 * ```ts
 * packageNameFor("/home/me/My App"); // "my-app"
 * ```
 */
export function packageNameFor(directory: string): string {
  const name = basename(directory)
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, "-")
    .replace(/^[._-]+|-+$/g, "");
  return name === "" ? "stint-app" : name.slice(0, 214);
}
