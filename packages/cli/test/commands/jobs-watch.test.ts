import { defineJob } from "@stint/core";
import { applicationName } from "@stint/core/internal";
import { buildNewJob } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { expect } from "chai";
import { sql } from "kysely";
import { ExitCode, runCli } from "../../src/index";
import { CapturedStream, stint } from "../helpers/run-stint";

const Emails = defineJob<{ n: number }>("emails");
const Reports = defineJob<{ n: number }>("reports");

describe("stint jobs watch", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 20 });
  });
  afterEach(() => test.drop());

  /** Starts `stint jobs watch <args>` in-process; resolves once its subscription is registered. */
  async function watch(args: readonly string[]): Promise<{ stdout: CapturedStream; stderr: CapturedStream; stop: () => Promise<number> }> {
    const stdout = new CapturedStream();
    const stderr = new CapturedStream();
    const controller = new AbortController();
    const code = runCli(["jobs", "watch", "--schema", test.schema, ...args], {
      stdout,
      stderr,
      env: { DATABASE_URL: process.env["DATABASE_URL"] },
      signal: controller.signal,
    });
    await eventually(
      async () => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.id(test.schema, "job_event_listeners")}`.execute(test.db);
        return (rows[0]?.n ?? 0) > 0;
      },
      { timeoutMs: 20_000, what: "the watch to subscribe" },
    );
    return {
      stdout,
      stderr,
      stop: () => {
        controller.abort();
        return code;
      },
    };
  }

  const lines = (stream: CapturedStream): string[] => stream.text.split("\n").filter((line) => line !== "");

  it("prints each event as a JSON line, a gap line when its connection is killed, and exits 0 when interrupted", async () => {
    const watching = await watch(["--json"]);
    const { id } = await test.store.enqueue(buildNewJob(Emails, { n: 1 }));
    const [job] = await test.store.claimBatch({ queue: "emails", workerId: "w1", limit: 1, leaseMs: 60_000 });
    await test.store.completeJobs({ workerId: "w1", jobs: [{ id, attempt: job!.attempt, resultJson: null, durationMs: 1 }] });
    await eventually(() => lines(watching.stdout).length === 3, { timeoutMs: 10_000, what: "three event lines" });
    // The watch's LISTEN connection is this process's `stint:events:…` one.
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${applicationName("events")}`.execute(test.db);
    await eventually(() => lines(watching.stdout).some((line) => line.includes('"reason":"reconnected"')), { timeoutMs: 20_000, what: "the gap line" });
    expect(await watching.stop()).to.equal(ExitCode.Ok);
    const printed = lines(watching.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(printed.slice(0, 3).map((event) => [event["type"], event["jobId"], event["queue"], event["attempt"]])).to.deep.equal([
      ["enqueued", id, "emails", 0],
      ["started", id, "emails", 1],
      ["succeeded", id, "emails", 1],
    ]);
    expect(new Date(printed[0]!["at"] as string).getTime()).to.be.closeTo(Date.now(), 60_000);
    expect(printed.filter((event) => event["type"] === "gap").map((event) => event["reason"])).to.deep.equal(["unavailable", "reconnected"]);
    expect(watching.stderr.text).to.contain("terminating connection");
  });

  it("prints only the queues given, one readable line each", async () => {
    const watching = await watch(["--queue", "reports"]);
    await test.store.enqueue(buildNewJob(Emails, { n: 1 }));
    const { id } = await test.store.enqueue(buildNewJob(Reports, { n: 2 }));
    await eventually(() => lines(watching.stdout).length === 1, { timeoutMs: 10_000, what: "one event line" });
    expect(await watching.stop()).to.equal(ExitCode.Ok);
    expect(lines(watching.stdout)).to.have.length(1);
    expect(lines(watching.stdout)[0]).to.match(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z enqueued  reports ${id} attempt 0$`));
    expect(watching.stderr.text).to.contain("watching job events of reports");
  });

  for (const given of [
    ["--queue", "emails", "--queue", "reports"],
    ["--queue", "emails,reports"],
  ]) {
    it(`watches every queue given by ${given.join(" ")}, and only those`, async () => {
      const watching = await watch(given);
      const Invoices = defineJob<{ n: number }>("invoices");
      await test.store.enqueue(buildNewJob(Invoices, { n: 0 }));
      const { id: email } = await test.store.enqueue(buildNewJob(Emails, { n: 1 }));
      const { id: report } = await test.store.enqueue(buildNewJob(Reports, { n: 2 }));
      await eventually(() => lines(watching.stdout).length === 2, { timeoutMs: 10_000, what: "two event lines" });
      expect(await watching.stop()).to.equal(ExitCode.Ok);
      expect(
        lines(watching.stdout).map((line) =>
          line
            .split(" ")
            .slice(1)
            .filter((word) => word !== ""),
        ),
      ).to.deep.equal([
        ["enqueued", "emails", email, "attempt", "0"],
        ["enqueued", "reports", report, "attempt", "0"],
      ]);
      expect(watching.stderr.text).to.contain("watching job events of emails, reports");
    });
  }

  /** A job of `emails` that died on its first attempt; returns its id. */
  async function deadJob(): Promise<string> {
    const { id } = await test.store.enqueue(buildNewJob(Emails, { n: 1 }));
    const [job] = await test.store.claimBatch({ queue: "emails", workerId: "w1", limit: 1, leaseMs: 60_000 });
    await test.store.markJobsDead({ workerId: "w1", jobs: [{ id, attempt: job!.attempt, failure: { message: "Error: no", code: "NO" } }] });
    return id;
  }

  it("prints a requeued event with its reason on a readable line", async () => {
    const id = await deadJob();
    const watching = await watch(["--queue", "emails"]);
    expect(await test.store.retryJob({ id })).to.equal(true);
    await eventually(() => lines(watching.stdout).length === 1, { timeoutMs: 10_000, what: "one event line" });
    expect(await watching.stop()).to.equal(ExitCode.Ok);
    expect(lines(watching.stdout)[0]).to.match(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z requeued  emails ${id} attempt 1 reason=retry$`));
  });

  it("prints a requeued event's reason in its JSON line", async () => {
    const id = await deadJob();
    const watching = await watch(["--json"]);
    expect(await test.store.retryJob({ id })).to.equal(true);
    await eventually(() => lines(watching.stdout).length === 1, { timeoutMs: 10_000, what: "one event line" });
    expect(await watching.stop()).to.equal(ExitCode.Ok);
    const printed = JSON.parse(lines(watching.stdout)[0]!) as Record<string, unknown>;
    expect({ ...printed, at: undefined }).to.deep.equal({ type: "requeued", jobId: id, queue: "emails", attempt: 1, reason: "retry", at: undefined });
    expect(new Date(printed["at"] as string).getTime()).to.be.closeTo(Date.now(), 60_000);
  });

  it("refuses an invalid queue name", async () => {
    const result = await stint(["jobs", "watch", "--schema", test.schema, "--queue", "Bad Name"]);
    expect(result.code).to.equal(ExitCode.Usage);
  });

  it("refuses an empty queue name, naming --queue", async () => {
    for (const given of [
      ["--queue", "emails", "--queue", ""],
      ["--queue", "emails,"],
    ]) {
      const result = await stint(["jobs", "watch", "--schema", test.schema, ...given]);
      expect(result.code, given.join(" ")).to.equal(ExitCode.Usage);
      expect(result.stderr, given.join(" ")).to.contain("--queue got an empty name");
    }
  });

  it("says in its help that --queue may be given more than once", async () => {
    const result = await stint(["jobs", "watch", "--help"]);
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.stdout).to.contain("jobs watch [--queue <name>[,<name>…]]… [--json]");
    expect(result.stdout).to.contain("or --queue once per queue");
  });
});
