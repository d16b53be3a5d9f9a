import { expect } from "chai";
import { sql } from "kysely";
import { completeJobsStatement } from "../../src/queries/complete-jobs";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { newJob } from "@stint/core/testing";

describe("the plan of a batch completion", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema();
  });
  afterEach(async () => {
    await test.drop();
  });

  it("looks each completed job up by primary key, never through the lease index, on a table without statistics", async () => {
    const jobs = Array.from({ length: 20_000 }, (_, n) => newJob("queue", { n }));
    for (let offset = 0; offset < jobs.length; offset += 5_000) await test.store.enqueueMany(jobs.slice(offset, offset + 5_000));
    const claimed = await test.store.claimBatch({ queue: "queue", workerId: "w", limit: 500, leaseMs: 60_000 });
    const done = claimed.slice(0, 400).map((job) => ({ id: job.id, attempt: job.attempt, resultJson: null, durationMs: 1 }));
    const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN ${completeJobsStatement(test.schema, "w", done)}`.execute(test.db);
    const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
    expect(plan, plan).to.match(/Index Scan (using|on) jobs_pkey/);
    expect(plan, plan).to.not.contain("jobs_lease_idx");
    expect(plan, plan).to.not.match(/Seq Scan on jobs/);
    expect(plan.match(/Function Scan on json_to_recordset/g), "the batch is parsed once, in its CTE, never rescanned per job").to.have.length(1);
    expect(plan, plan).to.contain("CTE batch");
    const applied = await test.store.completeJobs({ workerId: "w", jobs: done });
    expect(applied).to.have.length(400);
  });
});
