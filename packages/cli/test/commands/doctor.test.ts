import { expect } from "chai";
import { sql } from "kysely";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ThrowawayPgBouncer } from "@stint/throwaway-postgres";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";
import { makeRunningJobs, makeSucceededJobs } from "../helpers/job-states";

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

  describe("the history", () => {
    const today = sql`(now() AT TIME ZONE 'UTC')::date`;

    it("reports its size, its day partitions and the oldest, and what finished_jobs_kept holds", async () => {
      await sql`SELECT ${sql.id(test.schema, "ensure_history_partitions")}(${today} - 20, ${today} - 20)`.execute(test.db);
      const { rows } = await sql<{ day: string }>`SELECT to_char(${today} - 20, 'YYYY-MM-DD') AS day`.execute(test.db);
      const oldest = rows[0]!.day;
      const ids = await makeSucceededJobs(test.store, "mail", 3);
      await sql`UPDATE ${sql.id(test.schema, "finished_jobs")} SET finished_at = now() - interval '40 days' WHERE id = ${ids[0]!}::bigint`.execute(test.db);
      await sql`ANALYZE ${sql.id(test.schema, "finished_jobs")}`.execute(test.db);
      const result = await stint(["doctor", "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.Ok);
      const history = result.stdout.split("\n").find((line) => line.startsWith("✓ history "));
      expect(history).to.match(
        new RegExp(
          `^✓ history +finished_jobs holds about 3 rows, \\d+\\.\\d MiB with indexes, in 10 day partitions, ` +
            `the oldest finished_jobs_${oldest.replaceAll("-", "")} \\(${oldest}\\); finished_jobs_kept holds 1 row$`,
        ),
      );
      expect(result.stdout).to.match(/\n✓ history-partitions +day partitions are ready up to \d{4}-\d\d-\d\d \(7 days ahead\)\n/);
      expect(result.stdout).to.match(/\n✓ legacy-history +no finished jobs left in jobs\n/);
    });

    it("warns when fewer than 2 days of partitions are ready ahead", async () => {
      const { rows } = await sql<{ name: string }>`SELECT 'finished_jobs_' || to_char(day, 'YYYYMMDD') AS name
        FROM generate_series(${today} + 2, ${today} + 7, interval '1 day') AS day`.execute(test.db);
      for (const { name } of rows) await sql`DROP TABLE ${sql.id(test.schema, name)}`.execute(test.db);
      const result = await stint(["doctor", "--schema", test.schema, "--json"]);
      expect(result.code).to.equal(ExitCode.Ok);
      const checks = (result.json() as { checks: { name: string; ok: boolean; severity: string; detail: string }[] }).checks;
      const ahead = checks.find((check) => check.name === "history-partitions");
      expect(ahead).to.include({ ok: false, severity: "warning" });
      expect(ahead!.detail).to.match(
        /^day partitions reach only \d{4}-\d\d-\d\d \(1 day ahead\): jobs finishing on a day without one land in finished_jobs_kept/,
      );
      expect(ahead!.detail).to.include("`stint prune`");
    });

    it("warns about finished jobs still in jobs, and says to run stint migrate", async () => {
      const [id] = await makeRunningJobs(test.store, "mail", 1);
      await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'succeeded', finished_at = now(), locked_until = NULL WHERE id = ${id}::bigint`.execute(
        test.db,
      );
      const result = await stint(["doctor", "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.match(
        /\n✗ legacy-history +1 finished job is still in jobs, written before migration 15: .* run `stint migrate` to move them into finished_jobs \[warning\]\n/,
      );
    });
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
