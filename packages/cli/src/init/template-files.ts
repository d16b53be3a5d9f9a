import { cpSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";

/** The two applications `stint init` can write: TypeScript (the default) or plain JavaScript (`--js`). */
export type AppFlavour = "ts" | "js";

/** packages/cli/templates, from dist/src/init. */
const TEMPLATES = join(__dirname, "..", "..", "..", "templates");

/** The manifest each template's `package.json` is made from (scripts and third-party dependencies; no name, no stint packages). */
const MANIFEST_TEMPLATE = "package.template.json";

/**
 * Files npm leaves out of a package (`.gitignore`, and `.npmignore`'s rules
 * follow it), so the templates keep them under another name and `init`
 * restores it.
 */
const RENAMED: Readonly<Record<string, string>> = Object.freeze({ _gitignore: ".gitignore" });

/** The folder holding one flavour's template. */
export function templateDir(flavour: AppFlavour): string {
  return join(TEMPLATES, flavour);
}

/**
 * Copies the template of `flavour` into `target` (which must exist) and
 * returns the paths it wrote, relative to `target`, sorted; the manifest
 * template is not copied ({@link readManifestTemplate} reads it).
 *
 * @example
 * ```ts
 * copyTemplate("ts", "/home/me/my-app"); // [".gitignore", "README.md", "src/app.ts", …]
 * ```
 */
export function copyTemplate(flavour: AppFlavour, target: string): string[] {
  const source = templateDir(flavour);
  const written: string[] = [];
  for (const file of filesUnder(source)) {
    if (file === MANIFEST_TEMPLATE) continue;
    const name = RENAMED[file] ?? file;
    cpSync(join(source, file), join(target, name));
    written.push(name);
  }
  return written.sort();
}

/** The template's `package.json` without a name and without the stint packages. */
export function readManifestTemplate(flavour: AppFlavour): Record<string, unknown> {
  return JSON.parse(readFileSync(join(templateDir(flavour), MANIFEST_TEMPLATE), "utf8")) as Record<string, unknown>;
}

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join("/"));
}
