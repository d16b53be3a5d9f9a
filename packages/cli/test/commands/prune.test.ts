import { expect } from "chai";
import { sql } from "kysely";
import { defineJob } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
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
      "Deleted 0 closed unique windows.",
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

  it("deletes the closed unique windows, only of the queues asked for with --queue, and counts them with --dry-run", async () => {
    const windows = sql.id(test.schema, "unique_windows");
    for (const queue of ["mail", "other"]) {
      const kind = defineJob<{ n: number }>(queue);
      await test.store.enqueue(buildNewJob(kind, { n: 1 }, { unique: { key: "closed", forMs: 60_000 } }));
      await test.store.enqueue(buildNewJob(kind, { n: 2 }, { unique: { key: "open", forMs: 3_600_000 } }));
    }
    await sql`UPDATE ${windows} SET until = now() - interval '1 minute' WHERE key = 'closed'`.execute(test.db);
    const left = async () => (await sql<{ queue: string; key: string }>`SELECT queue, key FROM ${windows} ORDER BY queue, key`.execute(test.db)).rows;

    const preview = await stint(["prune", "--dry-run", "--schema", test.schema]);
    expect(preview.stdout).to.include("2 closed unique windows would go.\n");
    expect((await stint(["prune", "--dry-run", "--queue", "mail", "--schema", test.schema, "--json"])).json()).to.deep.include({ windows: 1 });

    const mail = await stint(["prune", "--queue", "mail", "--schema", test.schema, "--json"]);
    expect(mail.json()).to.deep.include({ windows: 1 });
    expect(await left()).to.deep.equal([
      { queue: "mail", key: "open" },
      { queue: "other", key: "closed" },
      { queue: "other", key: "open" },
    ]);
    const all = await stint(["prune", "--batch", "1", "--schema", test.schema]);
    expect(all.stdout).to.include("Deleted 1 closed unique windows.\n");
    expect(await left()).to.deep.equal([
      { queue: "mail", key: "open" },
      { queue: "other", key: "open" },
    ]);
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

  describe("--dry-run", () => {
    const today = sql`(now() AT TIME ZONE 'UTC')::date`;
    const dayName = async (daysAgo: number): Promise<string> => {
      const { rows } = await sql<{ name: string }>`SELECT 'finished_jobs_' || to_char(${today} - ${daysAgo}::integer, 'YYYYMMDD') AS name`.execute(test.db);
      return rows[0]!.name;
    };
    /** Moves finished jobs to this time of day `daysAgo` days ago: into that day's partition, or finished_jobs_kept. */
    const backdate = (ids: readonly string[], daysAgo: number) =>
      sql`UPDATE ${sql.id(test.schema, "finished_jobs")} SET finished_at = now() - ${daysAgo}::integer * interval '1 day'
        WHERE id = ANY(${[...ids]}::bigint[])`.execute(test.db);
    /** Every job and where it is, and every table of the schema: what a dry run must leave as it was. */
    const snapshot = async () => {
      const { rows: jobs } = await sql`SELECT j.id, j.state, j.finished_at, c.relname FROM ${sql.id(test.schema, "all_jobs")} AS j
        LEFT JOIN ${sql.id(test.schema, "finished_jobs")} AS f ON f.id = j.id LEFT JOIN pg_class AS c ON c.oid = f.tableoid ORDER BY j.id`.execute(test.db);
      const { rows: tables } =
        await sql`SELECT relname FROM pg_class WHERE relnamespace = ${test.schema}::regnamespace AND relkind IN ('r', 'p') ORDER BY relname`.execute(test.db);
      return { jobs, tables };
    };
    let oldDay: string;

    beforeEach(async () => {
      await sql`SELECT ${sql.id(test.schema, "ensure_history_partitions")}(${today} - 12, ${today} - 1)`.execute(test.db);
      const { rows } = await sql<{
        id: string;
        queue: string;
        state: string;
      }>`SELECT id, queue, state FROM ${sql.id(test.schema, "finished_jobs")} ORDER BY id`.execute(test.db);
      const ids = (queue: string, state: string) => rows.filter((row) => row.queue === queue && row.state === state).map((row) => row.id);
      const [dead10, dead40] = ids("mail", "dead");
      await backdate([...ids("mail", "succeeded").slice(0, 4), dead10!], 10);
      await backdate([dead40!], 40);
      // Past the cutoff, in the middle of a day that is not wholly past it.
      await sql`UPDATE ${sql.id(test.schema, "finished_jobs")} SET finished_at =
          date_trunc('day', now() - interval '7 days', 'UTC') + ((now() - interval '7 days') - date_trunc('day', now() - interval '7 days', 'UTC')) / 2
        WHERE queue = 'other'`.execute(test.db);
      oldDay = await dayName(10);
    });

    it("says per state what would go, with whole partitions and row by row, and changes nothing", async () => {
      const before = await snapshot();
      const result = await stint(["prune", "--dry-run", "--schema", test.schema, "--json"]);
      expect(result.code).to.equal(ExitCode.Ok);
      const report = result.json() as { partitions: { name: string; jobs: number; kept: number; states: string[] }[] };
      expect(report).to.deep.include({
        dryRun: true,
        wouldDelete: { succeeded: 4, dead: 1, cancelled: 0 },
        total: 5,
        inPartitions: { succeeded: 4, dead: 0, cancelled: 0 },
        rowByRow: { succeeded: 0, dead: 1, cancelled: 0 },
        waiting: { succeeded: 2, dead: 0, cancelled: 0 },
        effects: 0,
      });
      const expired = await Promise.all([12, 11, 10, 9, 8].map(dayName));
      expect(report.partitions.map((partition) => partition.name)).to.deep.equal(expired);
      expect(report.partitions.find((partition) => partition.name === oldDay)).to.deep.include({ jobs: 4, kept: 1, states: ["succeeded"] });
      expect(await snapshot()).to.deep.equal(before);
    });

    it("prints the partitions dropped whole, and then prune deletes what it said", async () => {
      const preview = await stint(["prune", "--dry-run", "--schema", test.schema]);
      expect(preview.code).to.equal(ExitCode.Ok);
      const lines = preview.stdout.split("\n");
      expect(lines.slice(0, 5)).to.deep.equal([
        "state      retention  would go  with partitions  row by row  waiting for their day",
        "---------  ---------  --------  ---------------  ----------  ---------------------",
        "succeeded     7 days         4                4           0                      2",
        "dead         30 days         1                0           1                      0",
        "cancelled    30 days         0                0           0                      0",
      ]);
      const day = `${oldDay.slice(14, 18)}-${oldDay.slice(18, 20)}-${oldDay.slice(20)}`;
      expect(lines.filter((line) => line.startsWith(oldDay))).to.have.length(1);
      expect(lines.find((line) => line.startsWith(oldDay))).to.match(new RegExp(`^${oldDay} +${day} +4 +1$`));
      expect(preview.stdout).to.include("Dry run, nothing deleted: 5 finished jobs would go, 4 with 5 partitions dropped whole and 1 row by row.\n");
      expect(preview.stdout).to.include("2 more are past their retention but stay until their whole day is (at most a day).\n");
      expect(preview.stdout).to.include("0 effect records older than 30 days would go.\n");

      const pruned = await stint(["prune", "--schema", test.schema, "--json"]);
      expect(pruned.json()).to.deep.include({ deleted: { succeeded: 4, dead: 1, cancelled: 0 }, total: 5 });
      const { rows } = await sql<{ found: boolean }>`SELECT to_regclass(format('%I.%I', ${test.schema}::text, ${oldDay}::text)) IS NOT NULL AS found`.execute(
        test.db,
      );
      expect(rows[0]!.found).to.equal(false);
    });

    it("with --queue, deletes row by row and drops no partition", async () => {
      const result = await stint(["prune", "--dry-run", "--queue", "mail", "--schema", test.schema, "--json"]);
      expect(result.json()).to.deep.include({
        wouldDelete: { succeeded: 4, dead: 1, cancelled: 0 },
        inPartitions: { succeeded: 0, dead: 0, cancelled: 0 },
        rowByRow: { succeeded: 4, dead: 1, cancelled: 0 },
        partitions: [],
        effects: null,
      });
    });
  });
});
