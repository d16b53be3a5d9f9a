import { expect } from "chai";
import { sql } from "kysely";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";
import { enqueueJobs, makeDeadJobs, makeSucceededJobs } from "../helpers/job-states";

describe("stint prune", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 20 });
    await makeSucceededJobs(test.store, "mail", 7);
    await makeDeadJobs(test.store, "mail", 3);
    await makeSucceededJobs(test.store, "other", 2);
    await enqueueJobs(test.store, "mail", 4);
  });
  afterEach(() => test.drop());

  it("keeps jobs younger than the retention", async () => {
    const result = await stint(["prune", "--schema", test.schema, "--json"]);
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.json()).to.deep.include({ deleted: { succeeded: 0, dead: 0, cancelled: 0 }, total: 0, interrupted: false });
  });

  it("deletes finished jobs past the retention in batches, and nothing active", async () => {
    const result = await stint(["prune", "--succeeded-days", "0", "--dead-days", "0", "--batch", "2", "--schema", test.schema]);
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.stdout.split("\n")).to.deep.equal([
      "state      retention  deleted",
      "---------  ---------  -------",
      "succeeded     0 days        9",
      "dead          0 days        3",
      "cancelled    30 days        0",
      "Deleted 12 finished jobs.",
      "Deleted 0 effect records older than 30 days.",
      "",
    ]);
    const counts = await test.store.countByQueue();
    expect(counts.map((row) => [row.queue, row.counts.queued, row.counts.succeeded, row.counts.dead])).to.deep.equal([["mail", 4, 0, 0]]);
  });

  it("deletes effect ledger entries past their retention, and keeps younger ones", async () => {
    await test.store.runEffectOnce({ key: "old", jobId: "1", resultJson: () => null }, async () => undefined);
    await test.store.runEffectOnce({ key: "new", jobId: "2", resultJson: () => null }, async () => undefined);
    await sql`update ${sql.id(test.schema, "effects")} set created_at = now() - interval '40 days' where key = 'old'`.execute(test.db);
    const result = await stint(["prune", "--schema", test.schema, "--json"]);
    expect(result.json()).to.deep.include({ effects: 1 });
    const { rows } = await sql<{ key: string }>`select key from ${sql.id(test.schema, "effects")}`.execute(test.db);
    expect(rows.map((row) => row.key)).to.deep.equal(["new"]);
  });

  it("prunes only the queues asked for", async () => {
    const result = await stint(["prune", "--succeeded-days", "0", "--queue", "other", "--schema", test.schema, "--json"]);
    expect((result.json() as { deleted: unknown }).deleted).to.deep.equal({ succeeded: 2, dead: 0, cancelled: 0 });
  });

  it("names a bad retention (exit 78)", async () => {
    const result = await stint(["prune", "--dead-days=-1", "--schema", test.schema]);
    expect(result.code).to.equal(ExitCode.Config);
    expect(result.stderr).to.include('--dead-days must be a number from 0 to 36500, got "-1"');
  });

  it("stops before the next batch when interrupted (exit 130)", async () => {
    const interrupt = new AbortController();
    interrupt.abort();
    const result = await stint(["prune", "--succeeded-days", "0", "--schema", test.schema, "--json"], { signal: interrupt.signal });
    expect(result.code).to.equal(ExitCode.Interrupted);
    expect(result.json()).to.deep.include({ total: 0, interrupted: true });
  });
});
