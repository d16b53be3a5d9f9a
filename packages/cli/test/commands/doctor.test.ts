import { expect } from "chai";
import { sql } from "kysely";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ThrowawayPgBouncer } from "@stint/throwaway-postgres";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";
import { makeRunningJobs } from "../helpers/job-states";

describe("stint doctor", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
  });
  afterEach(() => test.drop());

  it("prints a ✓ per passing check and exits 0 on a healthy schema", async () => {
    const result = await stint(["doctor", "--schema", test.schema]);
    expect(result.code).to.equal(ExitCode.Ok);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).to.match(
      /^✓ connection\s+a direct connection to PostgreSQL: named prepared statements, LISTEN wake-ups and the leader's advisory lock work$/,
    );
    expect(lines[1]).to.match(new RegExp(`^✓ schema\\s+schema ${test.schema} exists$`));
    expect(lines.filter((line) => line.startsWith("✓ ")).length).to.be.at.least(4);
    expect(lines.some((line) => line.startsWith("✗"))).to.equal(false);
    expect(lines[lines.length - 1]).to.match(/^All \d+ checks passed\.$/);
  });

  it("shows a failed warning with ✗ but still exits 0", async () => {
    const [id] = await makeRunningJobs(test.store, "mail", 1);
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET locked_until = now() - interval '10 minutes' WHERE id = ${id}::bigint`.execute(test.db);
    const result = await stint(["doctor", "--schema", test.schema]);
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.stdout).to.match(/\n✗ stuck-leases\s+.+ \[warning\]\n/);
    expect(result.stdout).to.match(/\n\d+ of \d+ checks failed: 1 warning\.\n$/);
  });

  it("exits 1 when a check of severity error fails", async () => {
    const result = await stint(["doctor", "--schema", "stint_cli_not_there"]);
    expect(result.code).to.equal(ExitCode.Failure);
    expect(result.stdout).to.match(/\n✗ schema\s+schema stint_cli_not_there is missing — run `stint migrate`/);
    expect(result.stdout).to.include("1 of 2 checks failed: 1 error.");
  });

  it("prints the checks as JSON with the same exit code", async () => {
    const healthy = await stint(["doctor", "--schema", test.schema, "--json"]);
    expect(healthy.code).to.equal(ExitCode.Ok);
    const report = healthy.json() as { checks: unknown[] };
    expect(report).to.include({ schema: test.schema, ok: true });
    expect(report.checks[1]).to.deep.equal({ name: "schema", ok: true, severity: "info", detail: `schema ${test.schema} exists` });
    const broken = await stint(["doctor", "--schema", "stint_cli_not_there", "--json"]);
    expect(broken.code).to.equal(ExitCode.Failure);
    expect(broken.json()).to.include({ ok: false });
  });

  describe("through PgBouncer in transaction mode", () => {
    let bouncer: ThrowawayPgBouncer;
    before(async () => {
      bouncer = await ThrowawayPgBouncer.start({ upstream: process.env["DATABASE_URL"] ?? "", poolMode: "transaction" });
    });
    after(() => bouncer?.stop());

    it("warns that it is a transaction pooler, names both settings, and exits 0", async () => {
      const result = await stint(["doctor", "--schema", test.schema], { env: { DATABASE_URL: bouncer.connectionString } });
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.match(/^✗ connection\s+a transaction pooler .*STINT_PREPARED_STATEMENTS.*STINT_SESSION_DATABASE_URL.* \[warning\]\n/);
      expect(result.stderr, "the pooler's refusal of statement_timeout is said as a warning").to.match(
        /^stint: warning: The server refused the startup parameter statement_timeout/,
      );
    });

    it("passes the connection check when STINT_SESSION_DATABASE_URL leads past the pooler", async () => {
      const env = { DATABASE_URL: bouncer.connectionString, STINT_SESSION_DATABASE_URL: process.env["DATABASE_URL"] };
      const result = await stint(["doctor", "--schema", test.schema], { env });
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.match(
        /^✓ connection\s+a transaction pooler .*; wake-ups and the leader lock use STINT_SESSION_DATABASE_URL, a direct connection to PostgreSQL\n/,
      );
    });
  });
});
