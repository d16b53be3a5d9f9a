import { expect } from "chai";
import { CompiledQuery, Kysely, PostgresDialect, type LogEvent } from "kysely";
import pg from "pg";
import { CANCEL_BATCH_SIZE, QueueAdmin } from "@stint/core";
import { newJob } from "@stint/core/testing";
import { PostgresJobStore } from "../../src";
import { createTestSchema, type TestSchema } from "../../src/testing";

describe("a bulk cancel of a queue's waiting jobs", () => {
  let test: TestSchema;
  let pool: pg.Pool;
  /** Every statement the logged store sent, with its parameters. */
  let statements: CompiledQuery[];
  let store: PostgresJobStore;

  beforeEach(async () => {
    test = await createTestSchema();
    pool = new pg.Pool({ connectionString: test.connectionString, max: 2 });
    statements = [];
    const log = (event: LogEvent): void => void statements.push(event.query);
    store = new PostgresJobStore({ db: new Kysely<any>({ dialect: new PostgresDialect({ pool }), log }), schema: test.schema });
  });
  afterEach(async () => {
    await pool.end();
    await test.drop();
  });

  async function enqueue(queue: string, count: number): Promise<void> {
    const jobs = Array.from({ length: count }, (_, n) => newJob(queue, { n }, { priority: n % 3 }));
    for (let offset = 0; offset < jobs.length; offset += 5_000) await test.store.enqueueMany(jobs.slice(offset, offset + 5_000));
  }

  it("cancels 10,000 queued jobs in batches of 1,000, one statement each", async () => {
    await enqueue("mail", 10_000);
    await enqueue("sms", 3);
    const batches: number[] = [];

    const result = await new QueueAdmin(store).cancelWaiting("mail", { states: ["queued"], max: 10_000, onBatch: (cancelled) => batches.push(cancelled) });

    expect(result).to.deep.equal({ cancelled: 10_000, interrupted: false });
    expect(CANCEL_BATCH_SIZE).to.equal(1_000);
    expect(statements, "one statement per batch, nothing else").to.have.length(10);
    for (const statement of statements) expect(statement.sql).to.contain("FOR UPDATE SKIP LOCKED");
    expect(batches).to.deep.equal(Array.from({ length: 10 }, (_, n) => (n + 1) * 1_000));
    const [mail, sms] = await test.store.countByQueue({ queues: ["mail", "sms"] });
    expect(mail!.counts).to.include({ queued: 0, cancelled: 10_000 });
    expect(sms!.counts).to.include({ queued: 3, cancelled: 0 });
  });

  it("without a maximum, stops at the first batch that finds fewer jobs than it asked for", async () => {
    await enqueue("mail", 2_500);
    const result = await new QueueAdmin(store).cancelWaiting("mail", { states: ["queued", "failed"] });
    expect(result.cancelled).to.equal(2_500);
    expect(statements).to.have.length(3);
  });

  it("stops between batches once its signal aborts", async () => {
    await enqueue("mail", 2_500);
    const stop = new AbortController();
    const result = await new QueueAdmin(store).cancelWaiting("mail", { states: ["queued"], signal: stop.signal, onBatch: () => stop.abort() });
    expect(result).to.deep.equal({ cancelled: 1_000, interrupted: true });
    expect(statements).to.have.length(1);
  });

  it("reads its candidates from the claim index in claim order, on a table without statistics", async () => {
    await enqueue("mail", 20_000);
    await new QueueAdmin(store).cancelWaiting("mail", { states: ["queued"], max: 1 });
    const [statement] = statements;
    const { rows } = await test.db.executeQuery<{ "QUERY PLAN": string }>(CompiledQuery.raw(`EXPLAIN ${statement!.sql}`, [...statement!.parameters]));
    const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
    expect(plan, plan).to.match(/Index Scan using jobs_claim_idx/);
    expect(plan, plan).to.not.match(/Seq Scan on jobs|Sort/);
  });
});
