import { expect } from "chai";
import { sql, type RawBuilder } from "kysely";
import { newJob } from "@stint/core/testing";
import { listGroupsStatement } from "../../src/queries/list-groups";
import { newestJobs } from "../../src/queries/newest-jobs";
import { JOB_COLUMNS } from "../../src/queries/job-row";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { moveFinishedRows } from "../support/finished-rows";

describe("group reads on PostgreSQL", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema();
  });
  afterEach(async () => {
    await test.drop();
  });

  const explain = async (statement: RawBuilder<unknown>): Promise<string> => {
    const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN ${statement}`.execute(test.db);
    return rows.map((row) => row["QUERY PLAN"]).join("\n");
  };

  it("lists a held line with the dead job that holds it, and drops the hold once the line is released", async () => {
    await test.store.enqueueMany([1, 2].map((n) => newJob("ledger", { n }, { groupKey: "acct-1", serial: "hold" })));
    const [head] = await test.store.claimBatch({ queue: "ledger", workerId: "w", limit: 10, leaseMs: 60_000 });
    expect((await test.store.listGroups({ queues: ["ledger"], limit: 10 }))[0]).to.deep.include({ key: "acct-1", serial: true, running: 1, waiting: 1 });
    await test.store.markJobsDead({ workerId: "w", jobs: [{ id: head!.id, attempt: head!.attempt, failure: { message: "Error: gone", code: null } }] });
    expect(await test.store.listGroups({ queues: ["ledger"], limit: 10 })).to.deep.equal([
      { queue: "ledger", key: "acct-1", serial: true, running: 0, waiting: 1, heldBy: head!.id },
    ]);
    expect(await test.store.releaseLine({ queue: "ledger", key: "acct-1" })).to.equal(true);
    expect((await test.store.listGroups({ queues: ["ledger"], limit: 10 }))[0]?.heldBy).to.equal(null);
    expect(await test.store.releaseLine({ queue: "ledger", key: "acct-1" }), "not held any more").to.equal(false);
  });

  /**
   * 20,000 finished jobs of one queue over 200 groups, one rare group with
   * 3 of them, and 2,000 waiting jobs over the same groups; tables never
   * analysed.
   */
  async function fill(): Promise<void> {
    const jobs = sql.id(test.schema, "jobs");
    await test.store.enqueueMany(Array.from({ length: 20_000 }, (_, n) => newJob("sync", { n }, { groupKey: n % 7_000 === 5 ? "rare" : `tenant-${n % 200}` })));
    await sql`UPDATE ${jobs} SET state = 'succeeded', finished_at = now(), attempts = 1`.execute(test.db);
    await moveFinishedRows(test.db, test.schema);
    await test.store.enqueueMany(Array.from({ length: 2_000 }, (_, n) => newJob("sync", { n }, { groupKey: `tenant-${n % 200}` })));
  }

  it("reads a group's jobs from the index ranges that hold it, in both tables", async () => {
    await fill();
    const page = newestJobs(test.schema, { select: JOB_COLUMNS, queue: "sync", group: { key: "rare", serial: false }, where: [], limit: 50 });
    const explained = await explain(page);
    expect(explained, explained).to.contain("jobs_claim_idx").and.contain("jobs_group_running_idx");
    expect(explained, explained).to.match(/queue_group_key_state_id_idx on finished_jobs_\w+/);
    expect(explained, explained).to.not.match(/finished_jobs_(\d+|kept)_id_idx/);
    expect(explained, explained).to.not.match(/jobs_pkey/);
    const { rows } = await page.execute(test.db);
    expect(rows).to.have.length(3);
  });

  it("reads the busiest groups from jobs_group_running_idx, job_groups and capped ranges of jobs_claim_idx", async () => {
    await fill();
    const claimed = await test.store.claimBatch({ queue: "sync", workerId: "w", limit: 20, leaseMs: 60_000 });
    const explained = await explain(listGroupsStatement(test.schema, { queues: ["sync"], limit: 10 }));
    expect(explained, explained).to.contain("jobs_group_running_idx").and.contain("jobs_claim_idx");
    expect(explained, explained).to.not.match(/Seq Scan on jobs /);
    const running = await explain(listGroupsStatement(test.schema, { limit: 10, runningOnly: true }));
    expect(running, running).to.contain("jobs_group_running_idx").and.not.contain("jobs_claim_idx");
    const groups = await test.store.listGroups({ queues: ["sync"], limit: 10 });
    expect(groups).to.have.length(10);
    expect(
      groups.slice(0, Math.min(10, claimed.length)).every((group) => group.running > 0),
      "the groups that run come first",
    ).to.equal(true);
  });
});
