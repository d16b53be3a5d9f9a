import { chmodSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The repository's root, from `packages/throwaway-postgres/dist/test/helpers`. */
export const REPOSITORY_ROOT = resolve(__dirname, "../../../../..");

/**
 * A fresh, empty directory under the system's temporary directory that
 * every user may enter (0755), to serve as a test's own `TMPDIR`: what a
 * run leaves behind is then exactly what is left in it, whatever other
 * processes do in the shared one.
 *
 * @example
 * const dir = scratchDirectory();
 * // … run with TMPDIR=dir …
 * expect(readdirSync(dir)).to.deep.equal([]);
 */
export function scratchDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), "stint-test-tmp-"));
  chmodSync(dir, 0o755);
  return dir;
}

/** The entries of `dir`, sorted, to compare before and after a run. */
export function entries(dir: string): string[] {
  return readdirSync(dir).sort();
}
