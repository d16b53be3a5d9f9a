import { expect } from "chai";
import { sql } from "kysely";
import { buildNewJob } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { ProbeJob, type Probe } from "../src/probe-job";
import { killMidJob } from "./kill-mid-job";
import { useProbeProcesses } from "./probe-fixture";

interface Execution {
  readonly seq: number;
  readonly attempt: number;
  readonly worker_id: string;
  readonly finished: boolean;
  readonly batch_size: number | null;
}

describe("batch handlers in worker processes", function () {
  this.timeout(60_000);
  const probes = useProbeProcesses({ defaultConcurrency: 1 });

  async function executions(): Promise<Execution[]> {
    const t = probes.schema();
    const { rows } = await sql<Execution>`SELECT seq, attempt, worker_id, done_at IS NOT NULL AS finished, batch_size
      FROM ${sql.id(t.schema, "executions")} ORDER BY seq, attempt`.execute(t.db);
    return rows;
  }
  async function states(): Promise<Record<string, number>> {
    const [counts] = await probes.schema().store.countByQueue({ queues: [ProbeJob.name] });
    return Object.fromEntries(Object.entries(counts!.counts).filter(([, count]) => count > 0));
  }
  const enqueue = (payloads: readonly unknown[]) => probes.schema().store.enqueueMany(payloads.map((payload) => buildNewJob(ProbeJob, payload as Probe)));

  it("gives each job of a batch its own outcome and history: succeeded, retried, dead, and dead with STINT_PARSE while the rest ran", async () => {
    const t = probes.schema();
    const jobs = await enqueue([{ seq: 1 }, { seq: 2 }, { seq: 3 }, { seq: 4, fail: "retry-once" }, { seq: 5, fail: "permanent" }, { seq: "six" }]);
    const ids = jobs.map((job) => job.id);
    const worker = probes.start({ MODE: "loop", PROBE_BATCH_SIZE: "10" });
    await eventually(async () => (await states())["succeeded"] === 4 && (await states())["dead"] === 2, { timeoutMs: 20_000, what: "every job settled" });
    worker.child.kill("SIGTERM");
    const { code, report } = await worker.exited;
    expect(code).to.equal(0);
    expect(report?.report.totals).to.include({ claimed: 7, succeeded: 4, retried: 1, dead: 2 });

    const stored = await Promise.all(ids.map((id) => t.store.getJob({ id })));
    expect(stored.map((job) => [job!.state, job!.attempts, job!.errorCode ?? null])).to.deep.equal([
      ["succeeded", 1, null],
      ["succeeded", 1, null],
      ["succeeded", 1, null],
      // As for any job that succeeded on a retry, the code of its last failure stays on it.
      ["succeeded", 2, "STINT_UNKNOWN"],
      ["dead", 1, "STINT_PERMANENT"],
      ["dead", 1, "STINT_PARSE"],
    ]);
    const retried = await t.store.listAttempts({ jobId: ids[3]! });
    expect(retried.map((attempt) => [attempt.attempt, attempt.outcome])).to.deep.equal([
      [1, "failed"],
      [2, "succeeded"],
    ]);
    expect(retried[0]!.error!.message).to.contain("probe 4 asked to fail once");
    const runs = await executions();
    expect(
      runs.map((run) => [run.seq, run.attempt, run.batch_size]),
      "the five jobs that parsed ran in one batch, the retry in a batch of its own; the one that did not parse never ran",
    ).to.deep.equal([
      [1, 1, 5],
      [2, 1, 5],
      [3, 1, 5],
      [4, 1, 5],
      [4, 2, 1],
      [5, 1, 5],
    ]);
    const { rows: hooks } = await sql<{ job_id: string; error_code: string }>`SELECT job_id::text, error_code
      FROM ${sql.id(t.schema, "dead_hook_calls")} ORDER BY job_id`.execute(t.db);
    expect(
      hooks.map((hook) => [hook.job_id, hook.error_code]),
      "onDead once per dead job",
    ).to.deep.equal([
      [ids[4], "STINT_PERMANENT"],
      [ids[5], "STINT_PARSE"],
    ]);
  });

  it("re-runs only the jobs a batch had not finished when its process was killed, once their lease lapses", async () => {
    const t = probes.schema();
    const jobs = await enqueue([{ seq: 1 }, { seq: 2 }, { seq: 3 }, { seq: 4, slow: true }, { seq: 5, slow: true }, { seq: 6, slow: true }]);
    const doomed = probes.start({ MODE: "loop", PROBE_BATCH_SIZE: "10", PROBE_SLEEP_MS: "60000", PROBE_LEASE_MS: "1500" });
    await eventually(async () => (await states())["succeeded"] === 3, { timeoutMs: 20_000, what: "the fast half of the batch to finish" });
    expect(await states()).to.deep.equal({ succeeded: 3, running: 3 });
    const held = await killMidJob(t, jobs[3]!.id, doomed);

    const heir = probes.start({ MODE: "once", PROBE_BATCH_SIZE: "10", PROBE_SLEEP_MS: "0" });
    const { code, report } = await heir.exited;
    expect(code).to.equal(0);
    expect(report?.report.totals).to.include({ claimed: 3, succeeded: 3 });
    expect(await states()).to.deep.equal({ succeeded: 6 });

    const runs = await executions();
    expect(runs.map((run) => [run.seq, run.attempt, run.finished, run.batch_size])).to.deep.equal([
      [1, 1, true, 6],
      [2, 1, true, 6],
      [3, 1, true, 6],
      [4, 1, false, 6],
      [4, 2, true, 3],
      [5, 1, false, 6],
      [5, 2, true, 3],
      [6, 1, false, 6],
      [6, 2, true, 3],
    ]);
    expect(runs.filter((run) => run.attempt === 2).every((run) => run.worker_id !== held.lockedBy)).to.equal(true);
    for (const job of jobs.slice(3)) {
      const attempts = await t.store.listAttempts({ jobId: job.id });
      expect(attempts.map((attempt) => [attempt.attempt, attempt.outcome])).to.deep.equal([
        [1, "lease-lost"],
        [2, "succeeded"],
      ]);
    }
  });
});
