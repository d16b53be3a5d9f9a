import { expect } from "chai";
import { sql } from "kysely";
import { buildNewJob } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ProbeJob } from "../src/probe-job";
import { createExecutionsTable } from "../src/probe-worker";
import { spawnProbeWorkers } from "../src/spawn-probe-workers";

describe("several worker processes on one queue", () => {
  let t: TestSchema;

  before(async () => {
    t = await createTestSchema();
    await createExecutionsTable(t.db, t.schema);
  });
  after(async () => {
    await t.drop();
  });

  it("4 OS processes × concurrency 4 drain 5,000 jobs, each handler running exactly once", async function () {
    this.timeout(120_000);
    const total = 5_000;
    const jobs = Array.from({ length: total }, (_, seq) => buildNewJob(ProbeJob, { seq }));
    await t.store.enqueueMany(jobs);

    const reports = await spawnProbeWorkers({
      connectionString: t.connectionString,
      schema: t.schema,
      processes: 4,
      concurrency: 4,
      recordExecutions: true,
    });

    const claimed = reports.map(({ report }) => report.totals.claimed);
    expect(claimed.reduce((a, b) => a + b, 0)).to.equal(total);
    expect(reports.every(({ report }) => report.totals.leaseLost === 0 && report.stoppedBecause === "drained" && report.exitCode === 0)).to.equal(true);
    expect(claimed.filter((n) => n > 0).length, `claims per process: ${claimed.join(", ")}`).to.be.at.least(2);

    const { rows: states } = await sql<{ state: string; n: number }>`
      select state, count(*)::int as n from ${sql.id(t.schema, "all_jobs")} group by state`.execute(t.db);
    expect(states).to.deep.equal([{ state: "succeeded", n: total }]);

    const { rows: runs } = await sql<{ executions: number; distinct_jobs: number; max_per_job: number }>`
      select count(*)::int as executions, count(distinct job_id)::int as distinct_jobs,
             coalesce(max(per_job), 0)::int as max_per_job
      from (select job_id, count(*) over (partition by job_id) as per_job from ${sql.id(t.schema, "executions")}) e`.execute(t.db);
    expect(runs[0]).to.deep.equal({ executions: total, distinct_jobs: total, max_per_job: 1 });
  });
});
