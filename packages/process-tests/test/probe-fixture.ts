import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { createExecutionsTable } from "../src/probe-worker";
import { startProbeProcess, type ProbeProcess } from "../src/spawn-probe-workers";

/** A fresh schema with an executions table per test, and probe processes that are killed after it. */
export interface ProbeFixture {
  /** The current test's schema. */
  readonly schema: () => TestSchema;
  /** Starts a probe worker process recording its executions; it is killed after the test if still running. */
  start(env?: Record<string, string>, concurrency?: number): ProbeProcess;
}

/**
 * Registers `beforeEach`/`afterEach` hooks in the calling `describe` and
 * returns the fixture they manage.
 *
 * @example
 * ```ts
 * const probes = useProbeProcesses({ defaultConcurrency: 4 });
 * it("…", async () => { const probe = probes.start({ MODE: "loop" }); … });
 * ```
 */
export function useProbeProcesses(options: { readonly defaultConcurrency: number; readonly maxConnections?: number }): ProbeFixture {
  let t: TestSchema | undefined;
  const running: ProbeProcess[] = [];
  beforeEach(async () => {
    t = await createTestSchema(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections });
    await createExecutionsTable(t.db, t.schema);
  });
  afterEach(async () => {
    for (const probe of running.splice(0)) {
      if (probe.child.exitCode === null && probe.child.signalCode === null) probe.child.kill("SIGKILL");
      await probe.exited;
    }
    await t?.drop();
  });
  const schema = (): TestSchema => {
    if (t === undefined) throw new Error("the probe fixture is used outside a test");
    return t;
  };
  return {
    schema,
    start(env = {}, concurrency = options.defaultConcurrency) {
      const { connectionString, schema: name } = schema();
      const probe = startProbeProcess({ connectionString, schema: name, concurrency, recordExecutions: true, env });
      running.push(probe);
      return probe;
    },
  };
}
