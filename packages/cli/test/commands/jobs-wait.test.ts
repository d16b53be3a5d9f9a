import { expect } from "chai";
import { sql } from "kysely";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";
import { makeDeadJobs, makeRunningJobs, makeSucceededJobs } from "../helpers/job-states";
import { eventually } from "@stint/core/testing";

describe("stint jobs wait", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 20 });
  });
  afterEach(() => test.drop());

  /** Resolves once a `jobs wait` has registered its wait for `id` (it then hears the finish). */
  async function waiting(id: string): Promise<void> {
    await eventually(
      async () => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.id(test.schema, "job_waiters")} WHERE job_id = ${id}::bigint`.execute(
          test.db,
        );
        return (rows[0]?.n ?? 0) > 0;
      },
      { timeoutMs: 20_000, what: "the wait to register" },
    );
  }

  it("exits 0 and prints the result once the job it waits for succeeds", async () => {
    const [id] = await makeRunningJobs(test.store, "billing", 1);
    const result = stint(["jobs", "wait", id!, "--schema", test.schema]);
    await waiting(id!);
    await test.store.completeJobs({ workerId: "cli-test-worker", jobs: [{ id: id!, attempt: 1, resultJson: '{"charged":42}', durationMs: 5 }] });
    const done = await result;
    expect(done.code).to.equal(ExitCode.Ok);
    expect(done.stdout).to.equal('{\n  "charged": 42\n}\n');
  });

  it("prints one JSON document for a job that already succeeded", async () => {
    const [id] = await makeSucceededJobs(test.store, "billing", 1);
    const done = await stint(["jobs", "wait", id!, "--schema", test.schema, "--json"]);
    expect(done.code).to.equal(ExitCode.Ok);
    expect(done.json()).to.deep.equal({ id, queue: "billing", state: "succeeded", attempts: 1, maxAttempts: 25, result: { ok: id } });
  });

  it("exits 5 for a dead job, with the reason on stderr, or the job's error as JSON on stdout", async () => {
    const [id] = await makeDeadJobs(test.store, "billing", 1);
    const text = await stint(["jobs", "wait", id!, "--schema", test.schema]);
    expect(text.code).to.equal(ExitCode.JobDead).and.to.equal(5);
    expect(text.stdout).to.equal("");
    expect(text.stderr).to.equal(`stint: job ${id} (billing) is dead after 1 of 25 attempts [STINT_PERMANENT]: Error: card declined for ${id}\n`);
    const json = await stint(["jobs", "wait", id!, "--schema", test.schema, "--json"]);
    expect(json.code).to.equal(5);
    expect(json.json()).to.deep.equal({
      id,
      queue: "billing",
      state: "dead",
      attempts: 1,
      maxAttempts: 25,
      errorCode: "STINT_PERMANENT",
      lastError: `Error: card declined for ${id}\n    at charge (billing.ts:12:5)`,
    });
  });

  it("exits 6 when the job it waits for is cancelled", async () => {
    const [id] = await makeRunningJobs(test.store, "billing", 1);
    const result = stint(["jobs", "wait", id!, "--schema", test.schema, "--json"]);
    await waiting(id!);
    expect(await test.store.cancelJob({ id: id! })).to.equal(true);
    const done = await result;
    expect(done.code).to.equal(ExitCode.JobCancelled).and.to.equal(6);
    expect(done.json()).to.include({ id, state: "cancelled" });
  });

  it("exits 124 when --timeout passes first, 3 for an unknown job, 130 when interrupted", async () => {
    const [id] = await makeRunningJobs(test.store, "billing", 1);
    // 1 s leaves the wait's first read time to finish on a loaded machine, so the message names the state it saw.
    const late = await stint(["jobs", "wait", id!, "--timeout", "1s", "--schema", test.schema, "--json"]);
    expect(late.code).to.equal(ExitCode.TimedOut).and.to.equal(124);
    expect(JSON.parse(late.stderr)).to.deep.equal({
      error: { code: "STINT_TIMED_OUT", message: `job ${id} did not finish within 1000 ms (it was running)` },
    });
    const missing = await stint(["jobs", "wait", "424242", "--schema", test.schema]);
    expect(missing.code).to.equal(ExitCode.NotFound);
    expect(missing.stderr).to.equal(`stint: job 424242 not found in schema "${test.schema}"\n`);
    const stop = new AbortController();
    const interrupted = stint(["jobs", "wait", id!, "--schema", test.schema], { signal: stop.signal });
    await waiting(id!);
    stop.abort();
    const stopped = await interrupted;
    expect(stopped.code).to.equal(ExitCode.Interrupted);
    expect(stopped.stderr).to.equal(`stint: interrupted while waiting for job ${id}\n`);
  });

  it("refuses a bad id (exit 2) and a bad --timeout (exit 78)", async () => {
    expect((await stint(["jobs", "wait", "abc", "--schema", test.schema])).code).to.equal(ExitCode.Usage);
    const badTimeout = await stint(["jobs", "wait", "1", "--timeout", "soon", "--schema", test.schema]);
    expect(badTimeout.code).to.equal(ExitCode.Config);
    expect(badTimeout.stderr).to.include("--timeout must be a duration such as 500ms, 30s, 4m or 1h30m");
  });
});
