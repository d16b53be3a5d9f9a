import { expect } from "chai";
import { sql } from "kysely";
import type { JobRecord } from "@stint/core";
import type { TestSchema } from "@stint/postgres-driver/testing";
import type { ProbeProcess } from "../src/spawn-probe-workers";
import { eventually } from "@stint/core/testing";

/**
 * Waits until `doomed` runs job `id`, kills it with SIGKILL, and waits until
 * the lease it held has run out on the database's clock. Returns the job as
 * it was while the killed process held it.
 *
 * @example
 * ```ts
 * const doomed = start({ MODE: "loop", PROBE_SLEEP_MS: "60000", PROBE_LEASE_MS: "1500" });
 * const held = await killMidJob(t, id, doomed);
 * ```
 */
export async function killMidJob(t: TestSchema, id: string, doomed: ProbeProcess): Promise<JobRecord> {
  const held = await eventually(
    async () => {
      const job = await t.store.getJob({ id });
      return job?.state === "running" ? job : undefined;
    },
    { timeoutMs: 20_000, what: "the first process to start the job" },
  );
  doomed.child.kill("SIGKILL");
  expect((await doomed.exited).signal).to.equal("SIGKILL");
  await eventually(
    async () => {
      const { rows } = await sql<{ lapsed: boolean }>`SELECT locked_until < now() AS lapsed FROM ${sql.id(t.schema, "jobs")} WHERE id = ${id}`.execute(t.db);
      return rows[0]?.lapsed;
    },
    { timeoutMs: 10_000, what: "the killed worker's lease to run out" },
  );
  return held;
}
