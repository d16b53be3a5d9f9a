import { expect } from "chai";
import { sql } from "kysely";
import { readQueueGaugesStatement } from "../../src/queries/read-queue-gauges";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { newJob } from "@stint/core/testing";
import { moveFinishedRows } from "../support/finished-rows";

describe("the gauges statement's plan", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema();
  });
  afterEach(async () => {
    await test.drop();
  });

  /**
   * 20,000 succeeded jobs of history, 300 waiting, 50 running and 20 dead in
   * four queues. The history and half the dead jobs are moved to
   * `finished_jobs`; the other dead jobs stay in `jobs`, as a version before
   * 15 left them.
   */
  async function fill(): Promise<void> {
    const jobs = (count: number) => Array.from({ length: count }, (_, n) => newJob(`queue-${n % 4}`, { n }));
    await test.store.enqueueMany(jobs(20_000));
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'succeeded', finished_at = now(), attempts = 1`.execute(test.db);
    await test.store.enqueueMany(jobs(370));
    await test.store.claimBatch({ queue: "queue-1", workerId: "w", limit: 70, leaseMs: 60_000 });
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'dead', finished_at = now(), locked_by = NULL, locked_until = NULL
               WHERE id IN (SELECT id FROM ${sql.id(test.schema, "jobs")} WHERE state = 'running' ORDER BY id LIMIT 20)`.execute(test.db);
    const jobsTable = sql.id(test.schema, "jobs");
    await moveFinishedRows(test.db, test.schema, sql`state = 'succeeded' OR id IN (SELECT id FROM ${jobsTable} WHERE state = 'dead' ORDER BY id LIMIT 10)`);
  }

  async function plan(): Promise<string> {
    const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN ${readQueueGaugesStatement(test.schema, {})}`.execute(test.db);
    return rows.map((row) => row["QUERY PLAN"]).join("\n");
  }

  /** The partitions of `finished_jobs` that hold rows, and the names of their `finished_jobs_dead_idx`. */
  async function filledPartitions(): Promise<{ readonly name: string; readonly deadIndex: string }[]> {
    const { rows } = await sql<{ name: string; dead_index: string }>`SELECT DISTINCT c.relname AS name, i.relname AS dead_index
      FROM ${sql.id(test.schema, "finished_jobs")} AS f
      JOIN pg_class AS c ON c.oid = f.tableoid
      JOIN pg_index AS x ON x.indrelid = c.oid
      JOIN pg_class AS i ON i.oid = x.indexrelid
      JOIN pg_inherits AS h ON h.inhrelid = i.oid AND h.inhparent = ${`${test.schema}.finished_jobs_dead_idx`}::regclass`.execute(test.db);
    return rows.map((row) => ({ name: row.name, deadIndex: row.dead_index }));
  }

  it("reads the partial indexes and never the succeeded history on tables never analysed", async () => {
    await fill();
    const explained = await plan();
    expect(explained, explained).to.not.match(/Seq Scan on jobs/);
    expect(explained, explained).to.contain("jobs_claim_idx").and.contain("jobs_lease_idx").and.contain("jobs_finished_idx");
    // Each partition holding history is read through its part of finished_jobs_dead_idx, never scanned nor walked by id or time.
    const partitions = await filledPartitions();
    expect(partitions, "the partitions holding the history").to.have.length.at.least(1);
    for (const { name, deadIndex } of partitions) {
      expect(explained, explained).to.match(new RegExp(`(Index Only Scan using ${deadIndex} on ${name}|Bitmap Index Scan on ${deadIndex})\\b`));
      expect(explained, explained).to.not.contain(`Seq Scan on ${name} `);
    }
    expect(explained, explained).to.not.match(/finished_jobs_\w+_(id|finished_at)_idx/);
  });

  it("counts the dead jobs of both tables", async () => {
    await fill();
    const { rows } = await readQueueGaugesStatement(test.schema, {}).execute(test.db);
    const dead = rows.filter((row) => row.state === "dead");
    expect(dead.map((row) => [row.queue, Number(row.jobs)])).to.deep.equal([["queue-1", 20]]);
    const { rows: places } = await sql<{ jobs: number; finished: number }>`SELECT
      (SELECT count(*)::int FROM ${sql.id(test.schema, "jobs")} WHERE state = 'dead') AS jobs,
      (SELECT count(*)::int FROM ${sql.id(test.schema, "finished_jobs")} WHERE state = 'dead') AS finished`.execute(test.db);
    expect(places[0]).to.deep.equal({ jobs: 10, finished: 10 });
  });
});
