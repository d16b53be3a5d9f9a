import { join } from "node:path";
import { expect } from "chai";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";
import { enqueueJobs } from "../helpers/job-states";

const APP = join(__dirname, "..", "fixtures", "schema-app.js");

describe("stint pause, resume and limit: which queue", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
  });
  afterEach(() => test.drop());

  const run = (...args: string[]) => stint([...args, "--schema", test.schema]);
  const controls = () => test.store.listQueueControls();
  const misspelt = (queue: string, forcing: string) =>
    `stint: queue "${queue}" has no jobs, no schedule and no pause or limit in schema "${test.schema}", so it may be misspelt; ` +
    `pass --force to ${forcing}, or --app MODULE to check it against your application's workers\n`;

  it("refuses a queue nothing knows, as enqueue does (exit 78), and changes nothing", async () => {
    await enqueueJobs(test.store, "mail", 1);
    const pause = await run("pause", "mial");
    expect(pause.code).to.equal(ExitCode.Config);
    expect(pause.stderr).to.equal(misspelt("mial", "pause anyway"));
    const resume = await run("resume", "mial");
    expect(resume.code).to.equal(ExitCode.Config);
    expect(resume.stderr).to.equal(misspelt("mial", "resume anyway"));
    const limit = await run("limit", "mial", "--max-running", "3");
    expect(limit.code).to.equal(ExitCode.Config);
    expect(limit.stderr).to.equal(misspelt("mial", "limit anyway"));
    const shown = await run("limit", "mial", "--json");
    expect(shown.code).to.equal(ExitCode.Config);
    expect(JSON.parse(shown.stderr)).to.deep.equal({ error: { code: "STINT_CONFIG", message: misspelt("mial", "limit anyway").slice(7, -1) } });
    expect(await controls()).to.deep.equal([]);
  });

  it("refuses a list with one unknown queue before pausing any, naming every unknown one", async () => {
    await enqueueJobs(test.store, "mail", 1);
    const result = await run("pause", "mail", "mial", "smss");
    expect(result.code).to.equal(ExitCode.Config);
    expect(result.stderr).to.contain(
      `queues "mial", "smss" have no jobs, no schedule and no pause or limit in schema "${test.schema}", so they may be misspelt`,
    );
    expect(await controls()).to.deep.equal([]);
  });

  it("changes a queue nothing knows with --force", async () => {
    expect((await run("pause", "later", "--force")).code).to.equal(ExitCode.Ok);
    expect((await run("limit", "later-too", "--rate", "5/s", "--force")).code).to.equal(ExitCode.Ok);
    expect((await run("resume", "later-three", "--force", "--json")).code).to.equal(ExitCode.Ok);
    const changed = (await controls()).map(({ queue, paused }) => ({ queue, paused }));
    expect(changed).to.have.deep.members([
      { queue: "later", paused: true },
      { queue: "later-too", paused: false },
      { queue: "later-three", paused: false },
    ]);
  });

  it("knows a queue by its jobs, by a schedule, and by a pause or limit set before", async () => {
    await enqueueJobs(test.store, "mail", 1);
    expect((await run("pause", "mail")).code).to.equal(ExitCode.Ok);
    const spec = { name: "nightly", queue: "nightly-report", cron: "0 3 * * *", timeZone: "UTC", payloadJson: "{}" };
    const settings = { catchUp: 1, enabled: true, priority: 0, maxAttempts: 3, timeoutMs: null };
    await test.store.syncSchedules({ schedules: [{ ...spec, ...settings }], firstRunAt: () => new Date(Date.now() + 3_600_000) });
    expect((await run("limit", "nightly-report", "--max-running", "1")).code).to.equal(ExitCode.Ok);
    // A queue paused ahead of its jobs: resuming and limiting it need no --force.
    expect((await run("pause", "ahead", "--force")).code).to.equal(ExitCode.Ok);
    const resumed = await run("resume", "ahead", "--json");
    expect(resumed.code, resumed.stderr).to.equal(ExitCode.Ok);
    expect(resumed.json()).to.deep.equal({ queues: [{ queue: "ahead", paused: false }] });
    const shown = await run("limit", "ahead", "--json");
    expect(shown.code, shown.stderr).to.equal(ExitCode.Ok);
    expect(shown.json()).to.deep.include({ queue: "ahead", paused: false });
  });

  it("knows the queues of the app module (--app or $STINT_APP), and names them when refusing", async () => {
    const paused = await run("pause", "cli-welcome", "--app", APP);
    expect(paused.code, paused.stderr).to.equal(ExitCode.Ok);
    const env = { DATABASE_URL: process.env["DATABASE_URL"], STINT_APP: APP };
    const limited = await stint(["limit", "cli-welcome", "--max-running", "2", "--schema", test.schema], { env });
    expect(limited.code, limited.stderr).to.equal(ExitCode.Ok);
    expect(await controls()).to.have.length(1);

    const typo = await run("pause", "cli-welcom", "--app", APP);
    expect(typo.code).to.equal(ExitCode.Config);
    expect(typo.stderr).to.equal(
      `stint: queue "cli-welcom" has no jobs, no schedule and no pause or limit in schema "${test.schema}", and ${APP} has no worker for it ` +
        "(known queues: cli-welcome); check the name, or pass --force to pause anyway\n",
    );
    expect((await stint(["resume", "cli-welcom", "--schema", test.schema], { env })).code).to.equal(ExitCode.Config);
    expect((await controls()).map(({ queue }) => queue)).to.deep.equal(["cli-welcome"]);
  });
});
