import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { sql } from "kysely";
import { dropSchema, MIGRATIONS, rolesSql } from "@stint/postgres-driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";

describe("stint migrate", () => {
  let test: TestSchema;
  let fresh: string;
  const latest = MIGRATIONS[MIGRATIONS.length - 1]!.version;

  before(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 2 });
  });
  beforeEach(() => {
    fresh = `stint_cli_migrate_${randomBytes(5).toString("hex")}`;
  });
  afterEach(() => dropSchema(test.db, fresh));
  after(() => test.drop());

  it("creates the tables and names the migrations it applied", async () => {
    const result = await stint(["migrate", "--schema", fresh]);
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.stdout).to.equal(
      `Migrated schema "${fresh}" to version ${latest}; applied: ${MIGRATIONS.map((m) => `${m.version} ${m.name}`).join(", ")}.\n`,
    );
    const status = await stint(["status", "--schema", fresh, "--json"]);
    expect(status.code).to.equal(ExitCode.Ok);
  });

  it("leaves an up-to-date schema alone", async () => {
    await stint(["migrate", "--schema", fresh]);
    const again = await stint(["migrate", "--schema", fresh]);
    expect(again.code).to.equal(ExitCode.Ok);
    expect(again.stdout).to.equal(`Schema "${fresh}" is up to date (version ${latest}).\n`);
  });

  it("prints what it did as JSON", async () => {
    const first = await stint(["migrate", "--schema", fresh, "--json"]);
    expect(first.json()).to.deep.equal({ schema: fresh, applied: MIGRATIONS.map((m) => m.version), version: latest, movedFinishedJobs: 0, interrupted: false });
    const second = await stint(["migrate", "--schema", fresh, "--json"]);
    expect(second.json()).to.deep.equal({ schema: fresh, applied: [], version: latest, movedFinishedJobs: 0, interrupted: false });
  });

  describe("with finished jobs an older version left in jobs", () => {
    /** Writes `count` finished jobs into `jobs`, where versions before 15 kept them. */
    async function leaveFinishedJobs(count: number): Promise<void> {
      expect((await stint(["migrate", "--schema", fresh])).code).to.equal(ExitCode.Ok);
      await sql`INSERT INTO ${sql.id(fresh, "jobs")} (queue, payload, state, attempts, finished_at)
        SELECT 'mail', '{}', CASE WHEN n % 3 = 0 THEN 'dead' ELSE 'succeeded' END, 1, now() - n * interval '1 second'
          FROM generate_series(1, ${count}::integer) AS n`.execute(test.db);
    }

    async function finishedLeftInJobs(): Promise<number> {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.id(fresh, "jobs")}`.execute(test.db);
      return rows[0]!.n;
    }

    it("moves them to finished_jobs, with progress on stderr and the count on stdout", async () => {
      await leaveFinishedJobs(12_000);

      const result = await stint(["migrate", "--schema", fresh], { tty: true });

      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.equal(`Schema "${fresh}" is up to date (version ${latest}).\nMoved 12,000 finished jobs to finished_jobs.\n`);
      expect(result.stderr).to.include("Moving finished jobs to finished_jobs").and.to.include("12,000");
      expect(await finishedLeftInJobs()).to.equal(0);
      const again = await stint(["migrate", "--schema", fresh, "--json"]);
      expect(again.json()).to.deep.include({ movedFinishedJobs: 0, interrupted: false });
      expect(again.stderr, "nothing to move, no progress").to.equal("");
    });

    it("leaves them with --schema-only", async () => {
      await leaveFinishedJobs(10);

      const result = await stint(["migrate", "--schema", fresh, "--schema-only"]);

      expect(result.stdout).to.equal(`Schema "${fresh}" is up to date (version ${latest}).\n`);
      expect(await finishedLeftInJobs()).to.equal(10);
    });

    it("stops between batches when interrupted, says how far it got, and exits 130", async () => {
      await leaveFinishedJobs(10);
      const interrupt = new AbortController();
      interrupt.abort();

      const result = await stint(["migrate", "--schema", fresh], { signal: interrupt.signal });

      expect(result.code).to.equal(ExitCode.Interrupted);
      expect(result.stdout).to.include("Interrupted after moving 0 of about 10 finished jobs to finished_jobs; run stint migrate again to move the rest.");
      expect(await finishedLeftInJobs()).to.equal(10);
    });
  });

  it("prints the SQL without connecting", async () => {
    const result = await stint(["migrate", "--print-sql", "--schema", "billing_jobs"], { env: {} });
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.stdout).to.include('CREATE SCHEMA IF NOT EXISTS "billing_jobs";');
    expect(result.stdout).to.include('CREATE TABLE "billing_jobs"."jobs"');
    expect(result.stderr).to.equal("");
  });

  it("prints the least-privilege roles SQL without connecting", async () => {
    const result = await stint(["migrate", "--print-roles-sql", "--schema", "billing_jobs", "--runtime-role", "billing_worker"], { env: {} });
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.stdout).to.equal(rolesSql("billing_jobs", { migrator: "stint_migrator", runtime: "billing_worker" }));
    const bad = await stint(["migrate", "--print-roles-sql", "--runtime-role", 'x"; DROP ROLE postgres; --'], { env: {} });
    expect(bad.code).to.equal(ExitCode.Config);
    expect(bad.stdout).to.equal("");
    expect(bad.stderr).to.include("runtime role must be a plain SQL identifier");
  });
});
