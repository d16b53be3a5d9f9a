import { expect } from "chai";
import { sql } from "kysely";
import { claimBatchStatement } from "../../src/queries/claim-batch";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { newJob } from "@stint/core/testing";

describe("the claim statement's plan", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema();
  });
  afterEach(async () => {
    await test.drop();
  });

  /** The plans of both forms of the claim (with the queue's controls, and without them), one after the other. */
  async function claimPlan(maxTimeoutMs?: number, takeOverExpired = true, limit = 10): Promise<string> {
    const plans: string[] = [];
    for (const mode of ["controlled", "plain"] as const) {
      const claim = claimBatchStatement(test.schema, { queue: "queue-2", workerId: "w", limit, leaseMs: 60_000, maxTimeoutMs, takeOverExpired }, mode);
      const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN ${claim}`.execute(test.db);
      plans.push(rows.map((row) => row["QUERY PLAN"]).join("\n"));
    }
    const [withControls, withoutControls] = plans;
    // Each form scans the claim index once and finds the picked rows by primary key (checked on the pair below).
    expect(withControls, withControls).to.contain("jobs_claim_idx");
    expect(withoutControls, withoutControls).to.contain("jobs_claim_idx");
    return plans.join("\n");
  }

  async function fill(): Promise<void> {
    const jobs = Array.from({ length: 8_000 }, (_, n) => newJob(`queue-${n % 4}`, { n }, { priority: n % 3 }));
    await test.store.enqueueMany(jobs);
    await test.store.claimBatch({ queue: "queue-1", workerId: "w", limit: 500, leaseMs: 60_000 });
  }

  it("commits without waiting for its WAL flush unless asked to, in every form", async () => {
    await fill();
    for (const takeOverExpired of [false, true]) {
      for (const mode of ["plain", "controlled", "grouped"] as const) {
        for (const durable of [false, true]) {
          const claim = claimBatchStatement(test.schema, { queue: "queue-2", workerId: "w", limit: 1, leaseMs: 60_000, takeOverExpired, durable }, mode);
          // In a transaction of its own, the setting the claim leaves is the one its commit goes by.
          const setting = await test.db.transaction().execute(async (tx) => {
            await claim.execute(tx);
            const { rows } = await sql<{ value: string }>`SELECT current_setting('synchronous_commit') AS value`.execute(tx);
            return rows[0]?.value;
          });
          expect(setting, JSON.stringify({ takeOverExpired, mode, durable })).to.equal(durable ? "on" : "off");
        }
      }
    }
    const { rows } = await sql<{ value: string }>`SELECT current_setting('synchronous_commit') AS value`.execute(test.db);
    expect(rows[0]?.value, "the session's own setting is untouched").to.equal("on");
  });

  it("scans the claim index, not the table, on a fresh table that was never analysed", async () => {
    await fill();
    const { rows } = await sql<{ analysed: boolean }>`SELECT (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL) AS analysed
      FROM pg_stat_user_tables WHERE schemaname = ${test.schema} AND relname = 'jobs'`.execute(test.db);
    expect(rows[0]?.analysed ?? false, "the table must not have statistics yet").to.equal(false);
    const plan = await claimPlan();
    expect(plan, plan).to.contain("jobs_claim_idx");
    expect(plan, plan).to.not.match(/Seq Scan on jobs/);
  });

  it("still scans the claim index once the table has statistics", async () => {
    await fill();
    await sql`ANALYZE ${sql.id(test.schema, "jobs")}`.execute(test.db);
    const plan = await claimPlan();
    expect(plan, plan).to.contain("jobs_claim_idx");
    expect(plan, plan).to.not.match(/Seq Scan on jobs/);
  });

  it("still scans the claim index when the claim is limited by maxTimeoutMs", async () => {
    await fill();
    for (const analysed of [false, true]) {
      if (analysed) await sql`ANALYZE ${sql.id(test.schema, "jobs")}`.execute(test.db);
      const plan = await claimPlan(30_000);
      expect(plan, plan).to.contain("jobs_claim_idx");
      expect(plan, plan).to.not.match(/Seq Scan on jobs/);
    }
  });

  it("scans the claim index and updates the picked rows where they lie without expired leases, at 10 and at 500 ids", async () => {
    await fill();
    for (const analysed of [false, true]) {
      if (analysed) await sql`ANALYZE ${sql.id(test.schema, "jobs")}`.execute(test.db);
      for (const limit of [10, 500]) {
        const plan = await claimPlan(undefined, false, limit);
        expect(plan, plan).to.contain("jobs_claim_idx");
        expect(plan.match(/Tid Scan on jobs/g), plan).to.have.length(2);
        // The one primary-key probe allowed is the follow-up's look at the job it follows, run only for such rows.
        const picking = plan.replace(/^.*Index Scan using jobs_pkey on jobs followed.*$/gm, "");
        expect(picking, plan).to.not.match(/Seq Scan on jobs|Hash Join|Bitmap|jobs_pkey/);
        expect(plan, plan).to.not.contain("jobs_lease_idx");
      }
    }
  });

  it("finds the picked rows by primary key when it also takes over expired leases, at 10 and at 500 ids", async () => {
    await fill();
    for (const analysed of [false, true]) {
      if (analysed) await sql`ANALYZE ${sql.id(test.schema, "jobs")}`.execute(test.db);
      for (const limit of [10, 500]) {
        const plan = await claimPlan(undefined, true, limit);
        expect(plan, plan).to.contain("jobs_pkey");
        expect(plan, plan).to.not.match(/Seq Scan on jobs|Hash Join/);
      }
    }
  });

  it("estimates a claim by its limit, not by the backlog: a deep queue's claim never costs enough to be compiled (JIT)", async () => {
    /** The planner's total cost of each form of the claim of 10 jobs from queue-2. */
    async function costs(): Promise<Record<string, number>> {
      await sql`ANALYZE ${sql.id(test.schema, "jobs")}`.execute(test.db);
      const byForm: Record<string, number> = {};
      for (const mode of ["plain", "controlled", "grouped"] as const) {
        for (const takeOverExpired of [false, true]) {
          const claim = claimBatchStatement(test.schema, { queue: "queue-2", workerId: "w", limit: 10, leaseMs: 60_000, takeOverExpired }, mode);
          const { rows } = await sql<{ "QUERY PLAN": [{ Plan: { "Total Cost": number } }] }>`EXPLAIN (FORMAT JSON) ${claim}`.execute(test.db);
          byForm[`${mode}, takeOverExpired ${takeOverExpired}`] = rows[0]!["QUERY PLAN"][0].Plan["Total Cost"];
        }
      }
      return byForm;
    }
    await fill();
    const shallow = await costs();
    await test.store.enqueueMany(Array.from({ length: 32_000 }, (_, n) => newJob(`queue-${n % 4}`, { n })));
    const deep = await costs();
    // Five times the backlog: a claim estimated by a share of the queue's rows (a tenth, for a limit the planner cannot
    // read) costs five times as much, and from a few hundred thousand jobs on passes jit_above_cost.
    for (const form of Object.keys(shallow)) expect(deep[form], `${form}: ${JSON.stringify({ shallow, deep })}`).to.be.below(shallow[form]! * 1.5);
  });

  it("spends nothing on the lease-lost history when no lease expired: one insert of no rows, no scan of the history", async () => {
    await fill();
    const claim = claimBatchStatement(test.schema, { queue: "queue-2", workerId: "w", limit: 10, leaseMs: 60_000 });
    const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) ${claim}`.execute(test.db);
    const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
    // PostgreSQL 18 prints row counts with two decimals.
    expect(plan, plan).to.match(/Insert on job_attempts[^\n]*\(actual rows=0(?:\.00)? loops=1\)/);
    expect(plan, plan).to.match(/Update on jobs[^\n]*\(actual rows=10(?:\.00)? loops=1\)/);
    expect(plan, plan).to.not.match(/Scan[^\n]* on job_attempts/);
  });
});
