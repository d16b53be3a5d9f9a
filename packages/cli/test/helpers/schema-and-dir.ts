import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";

/** A migrated schema and a scratch directory, made before a suite's tests and removed after them. */
export interface SchemaAndDir {
  readonly test: TestSchema;
  readonly dir: string;
}

/**
 * Registers `before`/`after` hooks in the calling `describe` that create a
 * fresh schema and a temporary directory, and returns them (read them in
 * tests, not at registration).
 *
 * @example
 * ```ts
 * const scene = useSchemaAndDir();
 * it("…", async () => { await scene.test.store.listJobs({ limit: 1 }); });
 * ```
 */
export function useSchemaAndDir(): SchemaAndDir {
  const scene: { test?: TestSchema; dir?: string } = {};
  before(async () => {
    scene.test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
    scene.dir = mkdtempSync(join(tmpdir(), "stint-cli-"));
  });
  after(async () => {
    if (scene.dir !== undefined) rmSync(scene.dir, { recursive: true, force: true });
    await scene.test?.drop();
  });
  return {
    get test() {
      return scene.test!;
    },
    get dir() {
      return scene.dir!;
    },
  };
}
