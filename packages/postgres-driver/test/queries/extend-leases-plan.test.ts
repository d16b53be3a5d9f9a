import { expect } from "chai";
import { newJob } from "@stint/core/testing";
import { loggedStorePerTest } from "../support/logged-store";

describe("the plan of a heartbeat", () => {
  const { schema, logged } = loggedStorePerTest();

  it("looks again only at the held jobs it did not extend, each by id, to name the cancelled ones", async () => {
    const jobs = Array.from({ length: 20_000 }, (_, n) => newJob("queue", { n }));
    for (let offset = 0; offset < jobs.length; offset += 5_000) await schema().store.enqueueMany(jobs.slice(offset, offset + 5_000));
    const held = (await schema().store.claimBatch({ queue: "queue", workerId: "w", limit: 500, leaseMs: 60_000 })).slice(0, 400);
    await schema().store.cancelJob({ id: held[0]!.id });

    const renewal = await logged().store.extendLeases({ workerId: "w", leaseMs: 60_000, jobs: held });

    expect(renewal.cancelled).to.deep.equal([held[0]!.id]);
    expect(renewal.extended).to.have.length(399);
    const plan = await logged().explain(logged().statements[0]!);
    expect(plan, plan).to.match(/CTE missed\n\s+->\s+Hash Anti Join/);
    // A cancelled job has moved to finished_jobs: the look finds it by id, in jobs and in each partition of the history.
    expect(plan, plan).to.match(
      /CTE Scan on missed[^\n]*\n\s+Filter: \(SubPlan \d+\)\n\s+SubPlan \d+\n\s+->\s+Result[^\n]*\n\s+->\s+Append[^\n]*\n\s+->\s+Index Scan using jobs_pkey/,
    );
    expect(plan.match(/Seq Scan on finished_jobs/g) ?? [], "no scan of the history for the cancelled ones").to.have.length(0);
    expect(plan.match(/Seq Scan on jobs/g) ?? [], "no second scan of the table for the cancelled ones").to.have.length.at.most(1);
  });
});
