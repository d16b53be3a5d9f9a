import { expect } from "chai";
import { sql } from "kysely";
import pg from "pg";
import { diagnose, MIGRATIONS, schemaStatus, type Diagnosis, type DiagnosisCheck } from "../src";
import { EXPECTED_INDEXES } from "../src/queries/diagnose-indexes";
import { createTestSchema, type TestSchema } from "../src/testing";
import { eventually, newJob } from "@stint/core/testing";

/** Checks that look only at the schema, not at the rest of the database (which other sessions share). */
const SCHEMA_CHECKS = ["schema", "migrations", "indexes", "wakeup-trigger", "stuck-leases", "jobs-bloat", "history", "history-partitions", "legacy-history"];

function check(diagnosis: Diagnosis, name: string): DiagnosisCheck {
  const found = diagnosis.checks.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no check named ${name} in ${JSON.stringify(diagnosis.checks.map((c) => c.name))}`);
  return found;
}

describe("diagnose and schemaStatus", () => {
  let test: TestSchema;
  const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version;

  beforeEach(async () => {
    test = await createTestSchema();
  });
  afterEach(async () => {
    await test.drop();
  });

  it("reports a fresh schema as healthy", async () => {
    const diagnosis = await diagnose(test.db, test.schema);
    expect(diagnosis.checks.map((c) => c.name)).to.deep.equal([...SCHEMA_CHECKS, "oldest-transaction", "idle-in-transaction"]);
    for (const name of SCHEMA_CHECKS) expect(check(diagnosis, name), name).to.include({ ok: true, severity: "info" });
    expect(diagnosis.checks.filter((c) => c.severity === "error")).to.deep.equal([]);
    expect(check(diagnosis, "migrations").detail).to.contain(`at migration ${latest}, latest is ${latest}`);
    expect(await schemaStatus(test.db, test.schema)).to.deep.equal({ exists: true, version: latest, latest });
  });

  it("expects exactly the indexes the migrations create, each partition of the history with its copy of every finished_jobs index", async () => {
    const { rows } = await sql<{ name: string; partition: boolean }>`SELECT i.relname AS name, t.relispartition AS partition
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
     WHERE t.relnamespace = ${test.schema}::regnamespace`.execute(test.db);
    const own = rows.filter((row) => !row.partition).map((row) => row.name);
    expect(own.sort()).to.deep.equal(EXPECTED_INDEXES.map((index) => index.name).sort());
    const { rows: copies } = await sql<{ parent: string; copies: number; partitions: number }>`SELECT parent.relname AS parent, count(*)::int AS copies,
           (SELECT count(*)::int FROM pg_inherits WHERE inhparent = ${`"${test.schema}".finished_jobs`}::regclass) AS partitions
      FROM pg_inherits h JOIN pg_class parent ON parent.oid = h.inhparent
     WHERE parent.relnamespace = ${test.schema}::regnamespace AND parent.relkind = 'I'
     GROUP BY parent.relname ORDER BY parent.relname`.execute(test.db);
    expect(copies.map((row) => row.parent)).to.deep.equal(
      EXPECTED_INDEXES.filter((index) => index.table === "finished_jobs")
        .map((index) => index.name)
        .sort(),
    );
    for (const row of copies) expect(row.copies, `copies of ${row.parent}`).to.equal(row.partitions);
    expect(rows.filter((row) => row.partition)).to.have.length(copies.length * (copies[0]?.partitions ?? 0));
  });

  it("reports a missing schema, and stops there", async () => {
    const missing = `${test.schema}_missing`;
    expect(await schemaStatus(test.db, missing)).to.deep.equal({ exists: false, version: 0, latest });
    const diagnosis = await diagnose(test.db, missing);
    expect(diagnosis.checks).to.have.length(1);
    expect(diagnosis.checks[0]).to.include({ name: "schema", ok: false, severity: "error" });
    expect(diagnosis.checks[0]!.detail).to.contain(`schema ${missing} is missing`).and.contain("stint migrate");
  });

  it("reports a schema that is behind the latest migration", async () => {
    await sql`DELETE FROM ${sql.id(test.schema, "migrations")} WHERE version = ${latest}::integer`.execute(test.db);
    expect(await schemaStatus(test.db, test.schema)).to.deep.equal({ exists: true, version: latest - 1, latest });
    const migrations = check(await diagnose(test.db, test.schema), "migrations");
    expect(migrations).to.include({ ok: false, severity: "error" });
    expect(migrations.detail).to.contain("stint migrate");
  });

  it("reports a missing index and an invalid one", async () => {
    const jobs = sql.id(test.schema, "jobs");
    await sql`DROP INDEX ${sql.id(test.schema, "jobs_finished_idx")}`.execute(test.db);
    // A concurrent build that fails (here on duplicates) leaves an invalid index behind.
    await sql`DROP INDEX ${sql.id(test.schema, "jobs_lease_idx")}`.execute(test.db);
    await test.store.enqueueMany([newJob("q", {}), newJob("q", {})]);
    await test.store.claimBatch({ queue: "q", workerId: "w", limit: 2, leaseMs: 60_000 });
    let failed = false;
    await sql`CREATE UNIQUE INDEX CONCURRENTLY jobs_lease_idx ON ${jobs} (queue) WHERE state = 'running'`.execute(test.db).catch(() => (failed = true));
    expect(failed, "the concurrent build must fail").to.equal(true);
    const indexes = check(await diagnose(test.db, test.schema), "indexes");
    expect(indexes).to.include({ ok: false, severity: "error" });
    expect(indexes.detail).to.contain("missing: jobs.jobs_finished_idx").and.contain("invalid").and.contain("jobs.jobs_lease_idx");
  });

  it("reports a jobs table full of dead rows", async function () {
    this.timeout(60_000);
    const jobs = sql.id(test.schema, "jobs");
    await sql`ALTER TABLE ${jobs} SET (autovacuum_enabled = false)`.execute(test.db);
    await test.store.enqueueMany(Array.from({ length: 12_000 }, (_, n) => newJob("q", { n })));
    await sql`DELETE FROM ${jobs}`.execute(test.db);
    const bloat = await eventually(
      async () => {
        const found = check(await diagnose(test.db, test.schema), "jobs-bloat");
        return found.ok ? undefined : found;
      },
      { timeoutMs: 30_000, what: "the statistics to show the dead rows" },
    );
    expect(bloat.severity).to.equal("warning");
    expect(bloat.detail).to.match(/ 12000 dead rows/);
  });

  it("reports a disabled wake-up trigger", async () => {
    await sql`ALTER TABLE ${sql.id(test.schema, "jobs")} DISABLE TRIGGER jobs_notify_inserted`.execute(test.db);
    expect(check(await diagnose(test.db, test.schema), "wakeup-trigger")).to.include({ ok: false, severity: "warning" });
  });

  it("reports running jobs whose lease expired more than the grace period ago", async () => {
    const [stuck] = await test.store.enqueueMany([newJob("q", {}), newJob("q", {})]);
    await test.store.claimBatch({ queue: "q", workerId: "w", limit: 2, leaseMs: 60_000 });
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET locked_until = now() - interval '10 minutes'
      WHERE id = ${stuck!.id}::bigint`.execute(test.db);
    const flagged = check(await diagnose(test.db, test.schema), "stuck-leases");
    expect(flagged).to.include({ ok: false, severity: "warning" });
    expect(flagged.detail).to.contain("1 running job(s)").and.contain(`ids ${stuck!.id}`);
    const lenient = check(await diagnose(test.db, test.schema, { stuckLeaseGraceMs: 3_600_000 }), "stuck-leases");
    expect(lenient.ok).to.equal(true);
  });

  it("reports a long transaction and a stint session idle inside a transaction", async () => {
    const client = new pg.Client({ connectionString: test.connectionString, application_name: `${test.schema}:idle` });
    await client.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT txid_current()");
      const diagnosis = await diagnose(test.db, test.schema, {
        longTransactionMs: 0,
        idleInTransactionMs: 0,
        applicationNamePrefix: test.schema,
      });
      expect(check(diagnosis, "oldest-transaction")).to.include({ ok: false, severity: "warning" });
      const idle = check(diagnosis, "idle-in-transaction");
      expect(idle).to.include({ ok: false, severity: "warning" });
      expect(idle.detail).to.contain(`${test.schema}:idle`);
    } finally {
      await client.query("ROLLBACK");
      await client.end();
    }
  });

  it("refuses unknown options and bad schema names", async () => {
    let caught: unknown;
    try {
      await diagnose(test.db, test.schema, { grace: 1 } as never);
    } catch (thrown) {
      caught = thrown;
    }
    expect(String(caught)).to.match(/diagnose\.grace/);
    caught = undefined;
    try {
      await schemaStatus(test.db, 'x"; drop');
    } catch (thrown) {
      caught = thrown;
    }
    expect(String(caught)).to.match(/schema/);
  });
});
