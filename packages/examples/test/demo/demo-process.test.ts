import { expect } from "chai";
import { ExitCode } from "@stint/core";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ThrowawayPgBouncer } from "@stint/throwaway-postgres";
import { startScript, type ScriptExit } from "../support/run-script";

/** Runs the demo as `npm start` does, with stdout and stderr piped apart. */
function runDemoProcess(env: Record<string, string>): Promise<ScriptExit> {
  return startScript("demo/main.js", [], env).exited;
}

/** Lines that are JSON log records (`level` and `message`). */
function logRecords(text: string): { level: string; message: string }[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level?: unknown; message?: unknown })
    .filter((record): record is { level: string; message: string } => typeof record.level === "string" && typeof record.message === "string");
}

describe("the demo as a process", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_demo_process", maxConnections: 2 });
  });
  afterEach(async () => {
    await test.drop();
  });

  it("prints its report on stdout and its logs, with the reasons payloads were refused, on stderr", async () => {
    const { code, stdout, stderr } = await runDemoProcess({ DATABASE_URL: test.connectionString, STINT_DEMO_SCHEMA: test.schema });

    expect(code, stderr).to.equal(0);
    expect(stdout).to.contain(`stint demo in schema "${test.schema}"`);
    expect(stdout).to.contain("All checks passed.");
    expect(stdout).to.contain(`npx stint dashboard --schema ${test.schema} --no-auth --app @stint/examples/app`);
    expect(logRecords(stdout), "log lines on stdout").to.deep.equal([]);
    expect(stdout).to.not.match(/"level":/);
    const records = logRecords(stderr);
    expect(records.length, "log lines on stderr").to.be.greaterThan(0);
    const refused = records.filter((record) => record.message.includes("has an invalid payload and is dead")).map((record) => record.message);
    expect(refused).to.have.length(5);
    expect(
      refused.some((message) => message.includes("payload.invoiceId: Invalid input: expected number, received string")),
      refused.join("\n"),
    ).to.equal(true);
  });

  it("runs behind PgBouncer in transaction mode with DATABASE_URL alone, and says once what it does there", async function () {
    this.timeout(120_000);
    const bouncer = await ThrowawayPgBouncer.start({ upstream: test.connectionString, poolMode: "transaction" });
    try {
      const { code, stdout, stderr } = await runDemoProcess({ DATABASE_URL: bouncer.connectionString, STINT_DEMO_SCHEMA: test.schema });
      expect(code, stderr).to.equal(0);
      expect(stdout).to.contain("All checks passed.");
      const warned = (code: string): number => stderr.split("\n").filter((line) => line.includes(`[${code}] Warning:`)).length;
      expect(warned("STINT_NO_STATEMENT_TIMEOUT"), stderr).to.equal(1);
      for (const code of ["STINT_UNNAMED_STATEMENTS", "STINT_NO_SESSIONS"]) expect(warned(code), code).to.be.at.most(1);
    } finally {
      await bouncer.stop();
    }
  });

  it("honours STINT_LOG_LEVEL and STINT_LOG_FORMAT", async () => {
    const { code, stdout, stderr } = await runDemoProcess({
      DATABASE_URL: test.connectionString,
      STINT_DEMO_SCHEMA: test.schema,
      STINT_LOG_LEVEL: "error",
      STINT_LOG_FORMAT: "pretty",
    });

    expect(code, stderr).to.equal(0);
    expect(stdout).to.contain("All checks passed.");
    expect(logRecords(stderr), "JSON lines despite STINT_LOG_FORMAT=pretty").to.deep.equal([]);
    const lines = stderr.split("\n").filter((line) => line !== "");
    expect(lines.length).to.be.greaterThan(0);
    for (const line of lines) expect(line).to.match(/^\d\d:\d\d:\d\d\.\d{3} \S*error\S* /);
  });

  it("asks for DATABASE_URL when it has none (exit 78, as `stint run` does)", async () => {
    const { code, stdout, stderr } = await runDemoProcess({ STINT_DEMO_SCHEMA: test.schema });

    expect(code).to.equal(ExitCode.Config);
    expect(stderr).to.contain("Set DATABASE_URL");
    expect(stdout).to.equal("");
  });

  it("refuses an invalid STINT_LOG_LEVEL at start, naming it (exit 78)", async () => {
    const { code, stdout, stderr } = await runDemoProcess({ DATABASE_URL: test.connectionString, STINT_DEMO_SCHEMA: test.schema, STINT_LOG_LEVEL: "verbose" });

    expect(code).to.equal(ExitCode.Config);
    expect(stderr).to.equal('STINT_LOG_LEVEL must be one of error, warn, info, debug; got "verbose"\n');
    expect(stdout).to.equal("");
  });
});
