import { expect } from "chai";
import { sql } from "kysely";
import { buildNewJob } from "@stint/core/driver";
import { ProbeJob } from "../src/probe-job";
import { killMidJob } from "./kill-mid-job";
import { useProbeProcesses } from "./probe-fixture";
import { eventually } from "@stint/core/testing";

interface HookCall {
  readonly job_id: string;
  readonly attempt: number;
  readonly delivery: number;
  readonly worker_id: string;
  readonly error_code: string | null;
}

describe("onDead across worker processes", function () {
  this.timeout(60_000);
  const probes = useProbeProcesses({ defaultConcurrency: 1 });

  async function hookCalls(): Promise<HookCall[]> {
    const t = probes.schema();
    const { rows } = await sql<HookCall>`SELECT job_id::text, attempt, delivery, worker_id, error_code
      FROM ${sql.id(t.schema, "dead_hook_calls")} ORDER BY job_id, at`.execute(t.db);
    return rows;
  }
  async function pendingHooks(): Promise<number> {
    const t = probes.schema();
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.id(t.schema, "dead_hooks")}`.execute(t.db);
    return rows[0]!.n;
  }

  it("calls it once, in the process that comes next, for a job whose worker was SIGKILLed on its last attempt", async () => {
    const t = probes.schema();
    const { id } = await t.store.enqueue(buildNewJob(ProbeJob, { seq: 1 }, { maxAttempts: 1 }));
    const doomed = probes.start({ MODE: "loop", PROBE_SLEEP_MS: "60000", PROBE_LEASE_MS: "1500" });
    const held = await killMidJob(t, id, doomed);
    expect(await hookCalls(), "nobody ran the hook while the job was still running").to.deep.equal([]);

    // A once-mode run rescues its queues' expired leases (the job dies in SQL), then drains, hooks included.
    const heir = probes.start({ MODE: "once" });
    const { code, report } = await heir.exited;
    expect(code).to.equal(0);
    expect(report?.report.totals.claimed).to.equal(0);

    const calls = await hookCalls();
    expect(calls.map((call) => [call.job_id, call.attempt, call.delivery, call.error_code])).to.deep.equal([[id, 1, 1, "STINT_WORKER_DIED"]]);
    expect(calls[0]!.worker_id).to.not.equal(held.lockedBy);
    expect(await t.store.getJob({ id })).to.include({ state: "dead", errorCode: "STINT_WORKER_DIED" });
    expect(await pendingHooks()).to.equal(0);

    expect((await probes.start({ MODE: "once" }).exited).code).to.equal(0);
    expect(await hookCalls(), "a later run calls nothing again").to.have.length(1);
  });

  it("calls it once per death when three processes race for 300 pending hooks", async function () {
    this.timeout(120_000);
    const t = probes.schema();
    const total = 300;
    const ids = (await t.store.enqueueMany(Array.from({ length: total }, (_, seq) => buildNewJob(ProbeJob, { seq }, { maxAttempts: 1 })))).map((job) => job.id);
    // Claimed by a worker that is gone at once: its 1 ms leases lapse, and the rescue makes every job dead in SQL.
    await t.store.claimBatch({ queue: ProbeJob.name, workerId: "gone", limit: total, leaseMs: 1 });
    await eventually(async () => (await t.store.rescueExpiredLeases({ limit: total })).dead === total, { timeoutMs: 10_000, what: "the rescue" });
    expect(await pendingHooks()).to.equal(total);

    const racers = [1, 2, 3].map(() => probes.start({ MODE: "once", PROBE_DEAD_HOOK_SLEEP_MS: "20" }, 2));
    const exits = await Promise.all(racers.map((racer) => racer.exited));
    expect(exits.map((exit) => exit.code)).to.deep.equal([0, 0, 0]);

    const calls = await hookCalls();
    expect(calls).to.have.length(total);
    expect(new Set(calls.map((call) => call.job_id)).size, "no death's hook ran twice").to.equal(total);
    expect(calls.map((call) => call.job_id).sort()).to.deep.equal([...ids].sort());
    expect(calls.every((call) => call.delivery === 1)).to.equal(true);
    const perProcess = new Map<string, number>();
    for (const call of calls) perProcess.set(call.worker_id, (perProcess.get(call.worker_id) ?? 0) + 1);
    expect(perProcess.size, `hooks per process: ${[...perProcess.values()].join(", ")}`).to.be.at.least(2);
    expect(await pendingHooks()).to.equal(0);
  });
});
