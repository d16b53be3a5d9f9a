import { join } from "node:path";
import { expect } from "chai";
import { sql } from "kysely";
import { defineJob } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { Echo } from "../fixtures/test-app";
import { databaseUrl, stint } from "../helpers/run-stint";

const APP = join(__dirname, "..", "fixtures", "test-app.js");

/** The run report `stint run --once` prints (the fields these tests read). */
interface RunReport {
  readonly totals: { readonly claimed: number };
}

describe("stint run", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
  });
  afterEach(() => test.drop());

  const run = (args: readonly string[], options: { env?: Record<string, string | undefined>; signal?: AbortSignal; tty?: boolean } = {}) =>
    stint(["run", ...args, "--schema", test.schema], options);

  it("works the due jobs once and prints one JSON summary line", async () => {
    await test.store.enqueueMany([buildNewJob(Echo, { text: "a" }), buildNewJob(Echo, { text: "b" }), buildNewJob(Echo, { fail: true })]);
    const result = await run(["cli-echo", "--once", "--app", APP, "--max-runtime", "1m"]);
    expect(result.code).to.equal(ExitCode.Ok);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).to.have.length(1);
    const report = JSON.parse(lines[0]!) as RunReport;
    expect(report).to.include({ mode: "once", exitCode: 0, stoppedBecause: "drained" });
    expect(report.totals).to.include({ claimed: 3, succeeded: 2, dead: 1 });
    const [counts] = await test.store.countByQueue({ queues: ["cli-echo"] });
    expect(counts!.counts).to.include({ succeeded: 2, dead: 1, queued: 0 });
  });

  it("forgets the closed unique windows of its queues in once mode, and leaves other queues' to stint prune", async () => {
    const Other = defineJob<{ n: number }>("cli-other");
    await test.store.enqueue(buildNewJob(Echo, { text: "a" }, { unique: { key: "closed", forMs: 60_000 } }));
    await test.store.enqueue(buildNewJob(Echo, { text: "b" }, { unique: { key: "open", forMs: 3_600_000 } }));
    await test.store.enqueue(buildNewJob(Other, { n: 1 }, { unique: { key: "closed", forMs: 60_000 } }));
    await sql`UPDATE ${sql.id(test.schema, "unique_windows")} SET until = now() - interval '1 minute' WHERE key = 'closed'`.execute(test.db);

    const result = await run(["cli-echo", "--once", "--app", APP]);
    expect(result.code).to.equal(ExitCode.Ok);
    expect((result.json() as { maintenance: string[] }).maintenance).to.include("cancelled 0 expired jobs, forgot 1 closed unique windows");
    const { rows } = await sql<{ queue: string; key: string }>`SELECT queue, key FROM ${sql.id(test.schema, "unique_windows")} ORDER BY queue, key`.execute(
      test.db,
    );
    expect(rows).to.deep.equal([
      { queue: "cli-echo", key: "open" },
      { queue: "cli-other", key: "closed" },
    ]);
  });

  it("accepts --json and prints the same summary", async () => {
    await test.store.enqueue(buildNewJob(Echo, { text: "a" }));
    const result = await run(["cli-echo", "--once", "--app", APP, "--json"]);
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.json()).to.include({ mode: "once", exitCode: 0, stoppedBecause: "drained" });
  });

  it("draws a progress line on a terminal with --once: done, failed, remaining and the rate", async () => {
    await test.store.enqueueMany([buildNewJob(Echo, { text: "a" }), buildNewJob(Echo, { text: "b" }), buildNewJob(Echo, { fail: true })]);
    const result = await run(["cli-echo", "--once", "--app", APP], { tty: true });
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.stderr).to.include("\r\x1b[Krun cli-echo: 0/3 jobs done (0%), 0 failed, 3 remaining");
    expect(result.stderr).to.match(/\r\x1b\[Krun cli-echo: 2\/3 jobs done \(66%\), 1 failed, 0 remaining, \d+(\.\d)?\/s\n$/);
    expect(JSON.parse(result.stdout)).to.include({ stoppedBecause: "drained" });
  });

  it("draws no progress line when stderr is not a terminal", async () => {
    await test.store.enqueueMany([buildNewJob(Echo, { text: "a" }), buildNewJob(Echo, { fail: true })]);
    const result = await run(["cli-echo", "--once", "--app", APP], { tty: false });
    expect(result.code).to.equal(ExitCode.Ok);
    expect((JSON.parse(result.stdout) as RunReport).totals).to.include({ succeeded: 1, dead: 1 });
    expect(result.stderr).to.equal("");
  });

  it("refuses an invalid STINT_LOG_LEVEL or STINT_LOG_FORMAT before it starts, naming the variable (exit 78)", async () => {
    await test.store.enqueue(buildNewJob(Echo, { text: "untouched" }));
    const level = await run(["cli-echo", "--once", "--app", APP], { env: { DATABASE_URL: databaseUrl(), STINT_LOG_LEVEL: "verbose" } });
    expect(level.code).to.equal(ExitCode.Config);
    expect(level.stderr).to.equal('stint: STINT_LOG_LEVEL must be one of error, warn, info, debug; got "verbose"\n');
    expect(level.stdout).to.equal("");
    const format = await run(["cli-echo", "--once", "--app", APP, "--json"], { env: { DATABASE_URL: databaseUrl(), STINT_LOG_FORMAT: "text" } });
    expect(format.code).to.equal(ExitCode.Config);
    expect(JSON.parse(format.stderr)).to.deep.equal({ error: { code: "STINT_CONFIG", message: 'STINT_LOG_FORMAT must be one of json, pretty; got "text"' } });
    const [counts] = await test.store.countByQueue({ queues: ["cli-echo"] });
    expect(counts!.counts.queued).to.equal(1);
  });

  it("stops at --max-jobs", async () => {
    await test.store.enqueueMany(Array.from({ length: 5 }, (_, n) => buildNewJob(Echo, { text: String(n) })));
    const result = await run(["cli-echo", "--once", "--max-jobs", "2", "--app", APP]);
    expect(result.code).to.equal(ExitCode.Ok);
    expect((JSON.parse(result.stdout) as RunReport).totals.claimed).to.equal(2);
  });

  it("reads the app module from STINT_APP", async () => {
    const result = await run(["cli-echo", "--once"], { env: { DATABASE_URL: databaseUrl(), STINT_APP: APP } });
    expect(result.code).to.equal(ExitCode.Ok);
    expect(JSON.parse(result.stdout)).to.include({ stoppedBecause: "drained" });
  });

  it("exits 130 when interrupted in once mode", async () => {
    await test.store.enqueue(buildNewJob(Echo, { text: "late" }));
    const interrupt = new AbortController();
    interrupt.abort();
    const result = await run(["cli-echo", "--once", "--app", APP], { signal: interrupt.signal });
    expect(result.code).to.equal(ExitCode.Interrupted);
    expect(JSON.parse(result.stdout)).to.include({ stoppedBecause: "signal", exitCode: 130 });
  });

  it("lists the known queues when the app has no worker for one (exit 78)", async () => {
    const result = await run(["cli-echo", "send-invoice", "--once", "--app", APP]);
    expect(result.code).to.equal(ExitCode.Config);
    expect(result.stderr).to.equal(`stint: ${APP} has no worker for "send-invoice" (known queues: cli-echo, cli-hang)\n`);
    expect(result.stdout).to.equal("");
  });

  it("lists the app's queues when no queue is named (exit 2), without touching the database", async () => {
    const result = await run(["--once", "--app", APP], { env: { DATABASE_URL: "postgres://postgres@127.0.0.1:1/unreachable" } });
    expect(result.code).to.equal(ExitCode.Usage);
    expect(result.stderr.split("\n")[0]).to.equal(`stint: no queue named: ${APP} runs cli-echo, cli-hang — e.g. stint run cli-echo --app ${APP}`);
    expect(result.stderr).to.include("Usage: stint run <queue…> --app <module>");
    expect(result.stdout).to.equal("");
    const fromEnv = await run([], { env: { DATABASE_URL: databaseUrl(), STINT_APP: APP } });
    expect(fromEnv.stderr.split("\n")[0]).to.equal(`stint: no queue named: ${APP} runs cli-echo, cli-hang — e.g. stint run cli-echo`);
    const json = await run(["--app", APP, "--json"]);
    expect(JSON.parse(json.stderr)).to.deep.include({
      error: { code: "STINT_USAGE", message: `no queue named: ${APP} runs cli-echo, cli-hang — e.g. stint run cli-echo --app ${APP}` },
    });
  });

  it("asks for a queue when neither a queue nor an app is given (exit 2)", async () => {
    const result = await stint(["run"]);
    expect(result.code).to.equal(ExitCode.Usage);
    expect(result.stderr.split("\n")[0]).to.equal("stint: run: missing argument <queue…> (with --app <module> or STINT_APP, it lists the app's queues)");
  });

  it("explains a missing, unloadable or incomplete app module (exit 78)", async () => {
    const none = await run(["cli-echo", "--once"]);
    expect(none.code).to.equal(ExitCode.Config);
    expect(none.stderr).to.include("no app module: pass --app <module> or set STINT_APP");
    const missing = await run(["cli-echo", "--app", "./no/such/app.js"]);
    expect(missing.code).to.equal(ExitCode.Config);
    expect(missing.stderr).to.include("app module ./no/such/app.js not found");
    const noPackage = await run(["cli-echo", "--app", "@acme/no-such-app"]);
    expect(noPackage.stderr).to.include("app module @acme/no-such-app not found");
    const incomplete = await run(["cli-echo", "--app", join(__dirname, "..", "fixtures", "no-create-app.js")]);
    expect(incomplete.code).to.equal(ExitCode.Config);
    expect(incomplete.stderr).to.include("does not export createApp(env)");
  });

  it("refuses to start on a schema without stint tables (exit 78)", async () => {
    const result = await stint(["run", "cli-echo", "--once", "--app", APP, "--schema", "stint_cli_never_migrated"]);
    expect(result.code).to.equal(ExitCode.Config);
    expect(result.stderr).to.equal('stint: schema "stint_cli_never_migrated" has no stint tables — run `stint migrate --schema stint_cli_never_migrated`\n');
    expect(result.stdout).to.equal("");
  });

  it("refuses to start, quickly, when the database is unreachable (exit 69)", async () => {
    const started = Date.now();
    const result = await run(["cli-echo", "--once", "--app", APP, "--database-url", "postgres://postgres@127.0.0.1:1/postgres"]);
    expect(result.code).to.equal(ExitCode.Infrastructure);
    expect(result.stderr).to.match(/^stint: cannot reach PostgreSQL at 127\.0\.0\.1:1/);
    expect(Date.now() - started).to.be.below(5_000);
  });

  it("names a bad duration or number (exit 78)", async () => {
    expect((await run(["cli-echo", "--once", "--app", APP, "--max-runtime", "4 min"])).stderr).to.include("--max-runtime must be a duration");
    expect((await run(["cli-echo", "--app", APP, "--health-port", "99999"])).stderr).to.include("--health-port must be an integer from 0 to 65535");
  });
});
