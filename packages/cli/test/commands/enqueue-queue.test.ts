import { join } from "node:path";
import { Readable } from "node:stream";
import { expect } from "chai";
import { ExitCode } from "../../src/index";
import { useSchemaAndDir } from "../helpers/schema-and-dir";
import { stint, type StintResult } from "../helpers/run-stint";

const APP = join(__dirname, "..", "fixtures", "test-app.js");

/** The id `stint enqueue --json` printed. */
const idOf = (result: StintResult): string => (result.json() as { id: string }).id;

describe("stint enqueue: which queue, with which defaults", () => {
  const scene = useSchemaAndDir();
  const enqueue = (...args: string[]) => stint(["enqueue", ...args, "--schema", scene.test.schema]);
  const jobsOf = (queue: string) => scene.test.store.listJobs({ queue, limit: 10 });

  it("refuses a queue with no jobs and no schedule, saying how to force it (exit 78)", async () => {
    const result = await enqueue("send-invoce", '{"invoiceId": 812}');
    expect(result.code).to.equal(ExitCode.Config);
    expect(result.stderr).to.include(`queue "send-invoce" has no jobs and no schedule in schema "${scene.test.schema}", so it may be misspelt`);
    expect(result.stderr).to.include("pass --force");
    const piped = await stint(["enqueue", "send-invoce", "--file", "-", "--schema", scene.test.schema], { stdin: Readable.from(['{"a":1}\n']) });
    expect(piped.code).to.equal(ExitCode.Config);
    expect(await jobsOf("send-invoce")).to.deep.equal([]);
  });

  it("enqueues to a new queue with --force, and to a queue with jobs without it", async () => {
    expect((await enqueue("new-queue", "{}", "--force")).code).to.equal(ExitCode.Ok);
    expect((await enqueue("new-queue", '{"again":true}')).code).to.equal(ExitCode.Ok);
    expect(await jobsOf("new-queue")).to.have.length(2);
  });

  it("knows a queue that only a schedule enqueues to", async () => {
    const spec = { name: "nightly", queue: "nightly-report", cron: "0 3 * * *", timeZone: "UTC", payloadJson: "{}" };
    const settings = { catchUp: 1, enabled: true, priority: 0, maxAttempts: 3, timeoutMs: null };
    await scene.test.store.syncSchedules({ schedules: [{ ...spec, ...settings }], firstRunAt: () => new Date(Date.now() + 3_600_000) });
    expect((await enqueue("nightly-report", "{}")).code).to.equal(ExitCode.Ok);
  });

  it("builds rows with the app's job kind defaults, overridden by options given", async () => {
    const result = await enqueue("cli-echo", '{"text":"hi"}', "--app", APP, "--json");
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
    const job = await scene.test.store.getJob({ id: idOf(result) });
    expect(job).to.include({ maxAttempts: 3, priority: 0 });
    const overridden = await enqueue("cli-echo", "{}", "--app", APP, "--max-attempts", "7", "--json");
    expect(await scene.test.store.getJob({ id: idOf(overridden) })).to.include({ maxAttempts: 7 });
  });

  it("applies the kind's defaults to every line of a file too, also through $STINT_APP", async () => {
    const env = { DATABASE_URL: process.env["DATABASE_URL"], STINT_APP: APP };
    const result = await stint(["enqueue", "cli-echo", "--file", "-", "--schema", scene.test.schema, "--json"], {
      env,
      stdin: Readable.from(['{"n":1}\n{"n":2}\n']),
    });
    expect(result.code, result.stderr).to.equal(ExitCode.Ok);
    const jobs = (await jobsOf("cli-echo")).filter((job) => (job.payload as { n?: number }).n !== undefined);
    expect(jobs.map((job) => job.maxAttempts)).to.deep.equal([3, 3]);
  });

  it("refuses a queue the app has no worker for, naming the known ones, unless --force", async () => {
    const result = await enqueue("cli-ecco", "{}", "--app", APP);
    expect(result.code).to.equal(ExitCode.Config);
    expect(result.stderr).to.include('has no worker for queue "cli-ecco" (known queues: cli-echo, cli-hang)');
    expect(await jobsOf("cli-ecco")).to.deep.equal([]);
    const forced = await enqueue("cli-ecco", "{}", "--app", APP, "--force", "--json");
    expect(forced.code, forced.stderr).to.equal(ExitCode.Ok);
    expect(await scene.test.store.getJob({ id: idOf(forced) })).to.include({ maxAttempts: 25 });
  });
});
