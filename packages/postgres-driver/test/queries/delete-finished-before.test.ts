import { expect } from "chai";
import { sql } from "kysely";
import { deleteFinishedRowsStatement, WALK_INDEXES } from "../../src/queries/delete-finished-rows";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { newJob } from "@stint/core/testing";
import { finishJobs, HistoryDays } from "./history-days";

describe("deleteFinishedBefore on PostgreSQL", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema();
  });
  afterEach(async () => {
    await test.drop();
  });

  /** Marks every job of the queue finished in `state`, `ageMs` ago. */
  async function finishAll(queue: string, state: string, ageMs: number): Promise<void> {
    await sql`UPDATE ${sql.id(test.schema, "jobs")}
      SET state = ${state}, finished_at = now() - ${ageMs}::double precision * interval '1 millisecond'
      WHERE queue = ${queue}`.execute(test.db);
  }

  it("skips a finished job another transaction holds instead of waiting for it", async () => {
    const [locked, free] = await test.store.enqueueMany([newJob("old", { n: 1 }), newJob("old", { n: 2 })]);
    await finishAll("old", "succeeded", 60_000);
    const deleted = await test.db.transaction().execute(async (trx) => {
      await sql`SELECT id FROM ${sql.id(test.schema, "jobs")} WHERE id = ${locked!.id}::bigint FOR UPDATE`.execute(trx);
      return test.store.deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 1_000, limit: 10 });
    });
    expect(deleted).to.equal(1);
    expect(await test.store.getJob({ id: free!.id })).to.equal(undefined);
    expect(await test.store.getJob({ id: locked!.id })).to.include({ state: "succeeded" });
  });

  it("reads dead and cancelled jobs from jobs_finished_idx and succeeded ones by oldest id, never scanning the table", async () => {
    const jobs = Array.from({ length: 6_000 }, (_, n) => newJob(`queue-${n % 3}`, { n }));
    await test.store.enqueueMany(jobs);
    await finishAll("queue-0", "succeeded", 3_600_000);
    await finishAll("queue-1", "dead", 3_600_000);
    for (const analysed of [false, true]) {
      if (analysed) await sql`ANALYZE ${sql.id(test.schema, "jobs")}`.execute(test.db);
      const states = ["succeeded", "dead", "cancelled"] as const;
      const statement = deleteFinishedRowsStatement(test.schema, "jobs", { states, olderThanMs: 60_000, limit: 500 });
      const { rows } = await test.db.transaction().execute(async (trx) => {
        await WALK_INDEXES.execute(trx);
        return sql<{ "QUERY PLAN": string }>`EXPLAIN ${statement}`.execute(trx);
      });
      const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
      expect(plan, plan).to.contain("jobs_finished_idx").and.contain("Index Scan using jobs_pkey");
      expect(plan, plan).to.not.match(/Seq Scan on jobs/);
    }
    expect(await test.store.deleteFinishedBefore({ states: ["succeeded", "dead"], olderThanMs: 60_000, limit: 500 })).to.equal(500);
  });

  it("deletes old succeeded jobs oldest id first, stepping over newer and unfinished ones", async () => {
    const [stillQueued, recent, ...old] = await test.store.enqueueMany(Array.from({ length: 5 }, (_, n) => newJob("mixed", { n })));
    await finishAll("mixed", "succeeded", 3_600_000);
    const jobs = sql.id(test.schema, "jobs");
    await sql`UPDATE ${jobs} SET state = 'queued', finished_at = NULL WHERE id = ${stillQueued!.id}::bigint`.execute(test.db);
    await sql`UPDATE ${jobs} SET finished_at = now() WHERE id = ${recent!.id}::bigint`.execute(test.db);
    expect(await test.store.deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 60_000, limit: 2 })).to.equal(2);
    expect(await test.store.deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 60_000, limit: 2 })).to.equal(1);
    for (const job of old) expect(await test.store.getJob({ id: job.id })).to.equal(undefined);
    expect(await test.store.getJob({ id: stillQueued!.id })).to.include({ state: "queued" });
    expect(await test.store.getJob({ id: recent!.id })).to.include({ state: "succeeded" });
  });

  /** The plan of the row-by-row statement on `table`, read twice: before and after ANALYZE. */
  async function plansOn(table: string): Promise<string[]> {
    const plans: string[] = [];
    for (const analysed of [false, true]) {
      if (analysed) await sql`ANALYZE ${sql.id(test.schema, "finished_jobs")}`.execute(test.db);
      const states = ["succeeded", "dead", "cancelled"] as const;
      const statement = deleteFinishedRowsStatement(test.schema, table, { states, olderThanMs: 60_000, limit: 500 });
      const { rows } = await test.db.transaction().execute(async (trx) => {
        await WALK_INDEXES.execute(trx);
        return sql<{ "QUERY PLAN": string }>`EXPLAIN ${statement}`.execute(trx);
      });
      plans.push(rows.map((row) => row["QUERY PLAN"]).join("\n"));
    }
    return plans;
  }

  it("skips a finished job another transaction holds in finished_jobs too", async () => {
    const [locked, free] = await finishJobs(test.store, "old", "succeeded", 2);
    await sql`UPDATE ${sql.id(test.schema, "finished_jobs")} SET finished_at = now() - interval '1 minute'`.execute(test.db);
    const deleted = await test.db.transaction().execute(async (trx) => {
      await sql`SELECT id FROM ${sql.id(test.schema, "finished_jobs")} WHERE id = ${locked!}::bigint FOR UPDATE`.execute(trx);
      // With queues: row by row only (a partition drop would wait for this transaction, and give up).
      return test.store.deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 1_000, limit: 10, queues: ["old"] });
    });
    expect(deleted).to.equal(1);
    expect(await test.store.getJob({ id: free! })).to.equal(undefined);
    expect(await test.store.getJob({ id: locked! })).to.include({ state: "succeeded" });
  });

  it("reads finished_jobs_kept and every partition of finished_jobs through their indexes, never scanning them", async () => {
    const days = new HistoryDays(test);
    await days.make(3, 1);
    const succeeded = await finishJobs(test.store, "queue-0", "succeeded", 300);
    const dead = await finishJobs(test.store, "queue-1", "dead", 300);
    await days.backdate(succeeded.slice(0, 100), 2);
    await days.backdate(dead.slice(0, 100), 40);
    for (const plan of await plansOn("finished_jobs_kept")) {
      // Either index that leads to the old rows of a state will do (the planner picks by the table's size); a scan of the table will not.
      expect(plan, plan).to.match(/Index (Only )?Scan (using|on) finished_jobs_kept_(state_finished_at_queue|queue_state_id)_idx/);
      expect(plan, plan).to.match(/Index Scan using finished_jobs_kept_id_idx/);
      expect(plan, plan).to.not.match(/Seq Scan/);
    }
    for (const plan of await plansOn("finished_jobs")) {
      expect(plan, plan).to.match(/Index (Only )?Scan (using|on) finished_jobs_\d{8}_(state_finished_at_queue|queue_state_id)_idx/);
      expect(plan, plan).to.match(/Index Scan using finished_jobs_\d{8}_id_idx/);
      expect(plan, plan).to.not.match(/Seq Scan/);
    }
  });

  it("deletes old finished jobs from jobs and from finished_jobs in one call, at most limit row by row", async () => {
    const [legacy] = await test.store.enqueueMany([newJob("legacy", { n: 1 })]);
    await finishAll("legacy", "dead", 3_600_000);
    const moved = await finishJobs(test.store, "moved", "dead", 2);
    await sql`UPDATE ${sql.id(test.schema, "finished_jobs")} SET finished_at = now() - interval '1 hour'`.execute(test.db);
    expect(await test.store.deleteFinishedBefore({ states: ["dead"], olderThanMs: 60_000, limit: 2 })).to.equal(2);
    expect(await test.store.deleteFinishedBefore({ states: ["dead"], olderThanMs: 60_000, limit: 2 })).to.equal(1);
    for (const id of [legacy!.id, ...moved]) expect(await test.store.getJob({ id })).to.equal(undefined);
  });
});
