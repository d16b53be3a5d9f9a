import { expect } from "chai";
import { buildNewJob } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ProbeJob } from "../src/probe-job";
import { startProbeProcess, type ProbeProcess } from "../src/spawn-probe-workers";
import { killMidJob } from "./kill-mid-job";

describe("the history of an attempt whose worker process was killed", function () {
  this.timeout(60_000);
  let t: TestSchema;
  const running: ProbeProcess[] = [];

  beforeEach(async () => {
    t = await createTestSchema();
  });
  afterEach(async () => {
    for (const probe of running.splice(0)) {
      if (probe.child.exitCode === null && probe.child.signalCode === null) probe.child.kill("SIGKILL");
      await probe.exited;
    }
    await t.drop();
  });

  function start(env: Record<string, string>): ProbeProcess {
    const probe = startProbeProcess({ connectionString: t.connectionString, schema: t.schema, concurrency: 1, env });
    running.push(probe);
    return probe;
  }

  it("has the worker that takes the job over write the lease-lost record of the killed one", async () => {
    const { id } = await t.store.enqueue(buildNewJob(ProbeJob, { seq: 1 }));
    const doomed = start({ MODE: "loop", PROBE_SLEEP_MS: "60000", PROBE_LEASE_MS: "1500" });
    const held = await killMidJob(t, id, doomed);
    expect(await t.store.listAttempts({ jobId: id })).to.deep.equal([]);

    const heir = start({ MODE: "once", PROBE_SLEEP_MS: "0", PROBE_LEASE_MS: "30000" });
    const { code, report } = await heir.exited;
    expect(code).to.equal(0);
    expect(report?.report.totals.succeeded).to.equal(1);

    const job = await t.store.getJob({ id });
    const attempts = await t.store.listAttempts({ jobId: id });
    expect(attempts.map((a) => [a.attempt, a.outcome])).to.deep.equal([
      [1, "lease-lost"],
      [2, "succeeded"],
    ]);
    const [lost, won] = attempts;
    expect(lost!.workerId).to.equal(held.lockedBy);
    expect(won!.workerId).to.equal(job!.lockedBy).and.not.equal(held.lockedBy);
    expect(lost!.startedAt!.getTime()).to.equal(held.startedAt!.getTime());
    expect(lost!.durationMs).to.be.at.least(1_000);
    expect(lost!.error!.code).to.equal("STINT_WORKER_DIED");
    // Whichever came first wrote it: the heir's claim of the expired lease, or its leader's lease rescue.
    expect(lost!.error!.message).to.match(
      new RegExp(`^The lease of worker ${held.lockedBy} expired at .+; (worker ${job!.lockedBy}|the lease rescue) took the job over\\.$`),
    );
  });
});
