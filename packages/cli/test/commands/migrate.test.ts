import { randomBytes } from "node:crypto";
import { expect } from "chai";
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
    expect(first.json()).to.deep.equal({ schema: fresh, applied: MIGRATIONS.map((m) => m.version), version: latest });
    const second = await stint(["migrate", "--schema", fresh, "--json"]);
    expect(second.json()).to.deep.equal({ schema: fresh, applied: [], version: latest });
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
