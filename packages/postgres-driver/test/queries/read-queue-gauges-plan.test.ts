import { expect } from "chai";
import { sql } from "kysely";
import { readQueueGaugesStatement } from "../../src/queries/read-queue-gauges";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { newJob } from "@stint/core/testing";

describe("the gauges statement's plan", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema();
  });
  afterEach(async () => {
    await test.drop();
  });

  /** 20,000 succeeded jobs of history, 300 waiting, 50 running and 20 dead in four queues. */
  async function fill(): Promise<void> {
    const jobs = (count: number) => Array.from({ length: count }, (_, n) => newJob(`queue-${n % 4}`, { n }));
    await test.store.enqueueMany(jobs(20_000));
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'succeeded', finished_at = now(), attempts = 1`.execute(test.db);
    await test.store.enqueueMany(jobs(370));
    await test.store.claimBatch({ queue: "queue-1", workerId: "w", limit: 70, leaseMs: 60_000 });
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'dead', finished_at = now(), locked_by = NULL, locked_until = NULL
               WHERE id IN (SELECT id FROM ${sql.id(test.schema, "jobs")} WHERE state = 'running' ORDER BY id LIMIT 20)`.execute(test.db);
  }

  async function plan(): Promise<string> {
    const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN ${readQueueGaugesStatement(test.schema, {})}`.execute(test.db);
    return rows.map((row) => row["QUERY PLAN"]).join("\n");
  }

  it("reads the partial indexes and never the succeeded history on a table never analysed", async () => {
    await fill();
    const explained = await plan();
    expect(explained, explained).to.not.match(/Seq Scan on jobs/);
    expect(explained, explained).to.contain("jobs_claim_idx").and.contain("jobs_lease_idx").and.contain("jobs_finished_idx");
  });
});
