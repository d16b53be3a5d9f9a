/**
 * Reading docs/use-in-your-app.md as a test script: its shell blocks are
 * marked `<!-- guide: NAME -->`, its files `<!-- from: PATH -->`.
 */

/** What a test changes in a shell block before running it. */
export interface ScriptChanges {
  /** Text replaced everywhere in the block: the guide's example paths by the test's folders. */
  readonly replace?: Readonly<Record<string, string>>;
  /** Lines left out: what the test has already done (building the checkout it runs in). */
  readonly skip?: readonly RegExp[];
}

/**
 * The shell block marked `<!-- guide: name -->`, with the changes applied;
 * a block that is not there fails the test that asks for it.
 *
 * @example
 * ```ts
 * await bash(guideScript(guide, "by-hand", { replace: { "~/src/stint": REPOSITORY } }), road, env);
 * ```
 */
export function guideScript(markdown: string, name: string, changes: ScriptChanges = {}): string {
  const match = new RegExp(`<!-- guide: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(markdown);
  if (match === null) throw new Error(`docs/use-in-your-app.md has no shell block marked <!-- guide: ${name} -->`);
  let script = match[1]!;
  for (const [from, to] of Object.entries(changes.replace ?? {})) script = script.split(from).join(to);
  return script
    .split("\n")
    .filter((line) => !(changes.skip ?? []).some((pattern) => pattern.test(line)))
    .join("\n");
}

/**
 * The whole files the guide shows, by their path below `prefix`: each block
 * whose `<!-- from: … -->` names a file under `prefix`. A block that shows
 * part of a file is not a whole file: the test that writes them compiles
 * what it gets, so an excerpt fails it.
 *
 * @example
 * ```ts
 * guideFiles(guide, "packages/cli/templates/ts/"); // { "src/app.ts": "import …", … }
 * ```
 */
export function guideFiles(markdown: string, prefix: string): Record<string, string> {
  const files: Record<string, string> = {};
  const pattern = /<!-- from: (\S+) -->\n```\w+\n([\s\S]*?)```/g;
  for (let match = pattern.exec(markdown); match !== null; match = pattern.exec(markdown)) {
    const source = match[1]!;
    if (source.startsWith(prefix)) files[source.slice(prefix.length)] = match[2]!;
  }
  return files;
}
