import { join } from "node:path";
import { expect } from "chai";
import { buildNewJob } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { Echo } from "../fixtures/test-app";
import { databaseUrl, stint } from "../helpers/run-stint";

const APP = join(__dirname, "..", "fixtures", "test-app.js");

/** A port nothing listens on: `--print-config` must not need the database. */
const UNREACHABLE = "postgres://postgres@127.0.0.1:1/postgres";

describe("stint run settings", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
  });
  afterEach(() => test.drop());

  const run = (args: readonly string[], env: Record<string, string> = {}) =>
    stint(["run", ...args, "--schema", test.schema], { env: { DATABASE_URL: databaseUrl(), ...env } });

  /** The most handlers of `cli-echo` that ran at once in a once run over eight jobs, as the jobs' results tell. */
  async function mostAtOnce(args: readonly string[], env: Record<string, string> = {}): Promise<number> {
    const ids = await test.store.enqueueMany(Array.from({ length: 8 }, (_, n) => buildNewJob(Echo, { text: String(n), holdMs: 30 })));
    const result = await run(["cli-echo", "--once", "--app", APP, ...args], env);
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
    const jobs = await Promise.all(ids.map(({ id }) => test.store.getJob({ id })));
    return Math.max(...jobs.map((job) => (job?.result as { inFlight: number }).inFlight));
  }

  it("runs the worker with the concurrency a flag or a variable sets instead of its constructor's", async () => {
    expect(await mostAtOnce([]), "the worker's own concurrency 4").to.equal(4);
    expect(await mostAtOnce(["--concurrency", "1"]), "--concurrency 1").to.equal(1);
    expect(await mostAtOnce([], { STINT_CONCURRENCY_CLI_ECHO: "2" }), "STINT_CONCURRENCY_CLI_ECHO=2").to.equal(2);
    expect(await mostAtOnce(["--concurrency", "3"], { STINT_CONCURRENCY_CLI_ECHO: "2", STINT_CONCURRENCY: "1" }), "the flag beats both").to.equal(3);
  });

  it("prints each queue's settings and their sources with --print-config, without connecting or running anything", async () => {
    const env = {
      DATABASE_URL: UNREACHABLE,
      STINT_PREFETCH: "0",
      STINT_LEASE_CLI_HANG: "2m",
      STINT_LOG_LEVEL: "warn",
      STINT_SCHEDULE_GRACE: "2d",
      STINT_LEASE_NOT_RUN: "nonsense",
      STINT_PREPARED_STATEMENTS: "off",
      STINT_SESSION_DATABASE_URL: "postgres://app:secret@db-direct:5432/app",
    };
    const result = await stint(["run", "cli-echo", "cli-hang", "--app", APP, "--print-config", "--concurrency", "2", "--schema", test.schema], { env });
    expect(result.stderr).to.equal("");
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.stdout).to.equal(
      [
        "queue       setting               value                                  source",
        "----------  --------------------  -------------------------------------  -------------------------------------------------------",
        "cli-echo    concurrency           2                                      flag --concurrency",
        "cli-echo    prefetch              0                                      env STINT_PREFETCH",
        "cli-echo    lease                 1m                                     default",
        "cli-echo    poll-interval         2s                                     default",
        "cli-echo    shutdown-timeout      30s                                    default",
        "cli-echo    dead-letter-queue     -                                      code (job kind)",
        "cli-hang    concurrency           2                                      flag --concurrency",
        "cli-hang    prefetch              0                                      env STINT_PREFETCH",
        "cli-hang    lease                 2m                                     env STINT_LEASE_CLI_HANG",
        "cli-hang    poll-interval         2s                                     default",
        "cli-hang    shutdown-timeout      1m                                     code",
        "cli-hang    dead-letter-queue     -                                      code (job kind)",
        "(all)       log-level             warn                                   env STINT_LOG_LEVEL",
        "(all)       schedule-grace        2d                                     env STINT_SCHEDULE_GRACE",
        "(all)       retention             succeeded 7d, dead 30d, cancelled 7d   default; a queue's own: stint retention",
        "(all)       queue-controls        in the database, not read here         stint status; stint limit <queue>; stint groups <queue>",
        "(database)  prepared-statements   off                                    env STINT_PREPARED_STATEMENTS",
        "(database)  session-database-url  postgres://app:***@db-direct:5432/app  env STINT_SESSION_DATABASE_URL",
        "",
      ].join("\n"),
    );
  });

  it("prints the settings as one JSON document with --print-config --json, and the misspelt variables as warnings", async () => {
    const flags = ["--shutdown-timeout", "25s", "--log-level", "debug", "--schedule-grace", "12h"];
    const result = await run(["cli-hang", "--app", APP, "--print-config", "--json", ...flags], {
      STINT_CONCURENCY: "3",
    });
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.json()).to.deep.equal({
      queues: [
        {
          queue: "cli-hang",
          settings: {
            concurrency: { value: 1, source: { kind: "code" } },
            prefetch: { value: "auto", source: { kind: "default" } },
            leaseMs: { value: 60_000, source: { kind: "default" } },
            pollIntervalMs: { value: 2_000, source: { kind: "default" } },
            shutdownTimeoutMs: { value: 25_000, source: { kind: "flag", name: "--shutdown-timeout" } },
          },
          deadLetterQueue: null,
        },
      ],
      logLevel: { value: "debug", source: { kind: "flag", name: "--log-level" } },
      scheduleGraceMs: { value: 43_200_000, source: { kind: "flag", name: "--schedule-grace" } },
      warnings: ["STINT_CONCURENCY is not a stint setting and is ignored; did you mean STINT_CONCURRENCY?"],
      retention: {
        globalDays: { succeededDays: 7, deadDays: 30, cancelledDays: 7 },
        queueDays: "in the database, not read here: stint retention lists every queue's",
      },
      queueControls: "in the database, not read here: stint status (paused, max running, max per group, rate limit), stint limit <queue>, stint groups <queue>",
      database: [
        { setting: "prepared-statements", value: "auto", source: "default" },
        { setting: "session-database-url", value: null, source: "default" },
      ],
    });
  });

  it("says with --print-config --once that the run prunes nothing, and where each queue's retention is", async () => {
    const result = await stint(["run", "cli-echo", "--once", "--app", APP, "--print-config", "--schema", test.schema], { env: { DATABASE_URL: UNREACHABLE } });
    expect(result.code).to.equal(ExitCode.Ok);
    const row = result.stdout.split("\n").find((line) => line.startsWith("(all)") && line.includes("retention"));
    expect(row?.split(/\s{2,}/)).to.deep.equal(["(all)", "retention", "none", "once mode prunes nothing (stint prune does); a queue's own: stint retention"]);
  });

  it("refuses an invalid flag or variable before it connects, naming it (exit 78)", async () => {
    await test.store.enqueue(buildNewJob(Echo, { text: "untouched" }));
    const variable = await run(["cli-echo", "--once", "--app", APP], { STINT_CONCURRENCY_CLI_ECHO: "abc", DATABASE_URL: UNREACHABLE });
    expect(variable.code).to.equal(ExitCode.Config);
    expect(variable.stderr).to.equal('stint: STINT_CONCURRENCY_CLI_ECHO must be an integer from 1 to 1000; got "abc"\n');
    const flag = await run(["cli-echo", "--once", "--app", APP, "--lease", "100ms", "--json"]);
    expect(flag.code).to.equal(ExitCode.Config);
    expect(JSON.parse(flag.stderr)).to.deep.equal({
      error: { code: "STINT_CONFIG", message: '--lease must be a duration from 200ms to 1d, such as 500ms, 90s or 2m; got "100ms"' },
    });
    const grace = await run(["cli-echo", "--once", "--app", APP, "--schedule-grace", "30s"]);
    expect(grace.code).to.equal(ExitCode.Config);
    expect(grace.stderr).to.equal('stint: --schedule-grace must be a duration from 1m to 365d, such as 12h, 1d or 7d; got "30s"\n');
    const [counts] = await test.store.countByQueue({ queues: ["cli-echo"] });
    expect(counts!.counts.queued).to.equal(1);
  });
});
