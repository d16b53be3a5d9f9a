import { expect } from "chai";
import { sql } from "kysely";
import { buildNewJob } from "@stint/core/driver";
import { ProbeJob } from "../src/probe-job";
import { useProbeProcesses } from "./probe-fixture";
import { sampleRunningPerGroup } from "./running-sampler";

describe("groups across real worker processes", function () {
  this.timeout(180_000);
  const fixture = useProbeProcesses({ defaultConcurrency: 8, maxConnections: 6 });
  async function rows<R>(query: ReturnType<typeof sql<R>>): Promise<R[]> {
    return (await query.execute(fixture.schema().db)).rows;
  }

  it("holds 3 processes × concurrency 8 to maxRunningPerGroup 2 over 40 groups, sampled every 10 ms, each job running once", async () => {
    const t = fixture.schema();
    const groups = 40;
    const perGroup = 15;
    // Enqueued group by group: a claim in enqueue order would take one group's whole backlog.
    await t.store.enqueueMany(
      Array.from({ length: groups * perGroup }, (_, seq) => buildNewJob(ProbeJob, { seq }, { group: `tenant-${Math.floor(seq / perGroup)}` })),
    );
    await t.store.setQueueControls(ProbeJob.name, { maxRunningPerGroup: 2 });
    const sampler = sampleRunningPerGroup(t, ProbeJob.name, 10);
    const probes = Array.from({ length: 3 }, () => fixture.start({ PROBE_SLEEP_MS: "30" }));
    const ended = await Promise.all(probes.map((probe) => probe.exited));
    const seen = await sampler.stop();
    expect(
      ended.map((end) => end.report?.report.stoppedBecause),
      ended.map((end) => end.stderr).join("\n"),
    ).to.deep.equal(["drained", "drained", "drained"]);

    expect(seen.samples, "samples taken during the drain").to.be.greaterThan(20);
    expect(seen.most, `most running of one group in a sample (over ${seen.samples} samples)`).to.equal(2);
    const [states] = await rows(sql<{ done: number; other: number }>`
      SELECT count(*) FILTER (WHERE state = 'succeeded')::int AS done, count(*) FILTER (WHERE state <> 'succeeded')::int AS other
        FROM ${sql.id(t.schema, "all_jobs")}`);
    expect(states).to.deep.equal({ done: groups * perGroup, other: 0 });
    const [runs] = await rows(sql<{ runs: number; jobs: number }>`
      SELECT count(*)::int AS runs, count(DISTINCT job_id)::int AS jobs FROM ${sql.id(t.schema, "executions")} WHERE done_at IS NOT NULL`);
    expect(runs).to.deep.equal({ runs: groups * perGroup, jobs: groups * perGroup });
    // The handlers' own record agrees: at each handler's start, at most 2 of its group were between their first and last statement.
    const [overlap] = await rows(sql<{ most: number }>`
      WITH runs AS (SELECT e.*, j.group_key FROM ${sql.id(t.schema, "executions")} AS e JOIN ${sql.id(t.schema, "all_jobs")} AS j ON j.id = e.job_id)
      SELECT max((SELECT count(*) FROM runs AS other WHERE other.group_key = r.group_key AND other.at <= r.at AND other.done_at >= r.at))::int AS most
        FROM runs AS r`);
    expect(overlap!.most).to.be.within(1, 2);
  });
});
