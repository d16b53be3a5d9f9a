import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { expect } from "chai";
import { buildNewJob } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { Echo, Hang } from "../fixtures/test-app";
import { databaseUrl } from "../helpers/run-stint";
import { eventually } from "@stint/core/testing";

const BIN = join(__dirname, "..", "..", "src", "bin", "stint.js");
const APP = join(__dirname, "..", "fixtures", "test-app.js");

/** A `stint` process with its output collected as it comes. */
interface StintProcess {
  readonly child: ChildProcess;
  readonly output: { stdout: string; stderr: string };
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function spawnStint(args: readonly string[], env: Record<string, string> = {}): StintProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env["PATH"] ?? "", DATABASE_URL: databaseUrl(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => (output.stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output.stderr += chunk.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal })),
  );
  return { child, output, exited };
}

describe("the stint binary", () => {
  let test: TestSchema;
  const running: ChildProcess[] = [];

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
  });
  afterEach(async () => {
    for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await test.drop();
  });

  const start = (args: readonly string[], env?: Record<string, string>): StintProcess => {
    const started = spawnStint(args, env);
    running.push(started.child);
    return started;
  };

  it("runs a command as a process and exits with its code", async () => {
    const status = start(["status", "--schema", test.schema, "--json"]);
    expect(await status.exited).to.deep.equal({ code: ExitCode.Ok, signal: null });
    expect((JSON.parse(status.output.stdout) as { schema: string }).schema).to.equal(test.schema);

    const unreachable = start(["status", "--database-url", "postgres://postgres@127.0.0.1:1/postgres"]);
    expect((await unreachable.exited).code).to.equal(ExitCode.Infrastructure);
    expect(unreachable.output.stderr).to.match(/^stint: cannot reach PostgreSQL at 127\.0\.0\.1:1/);
  });

  it("stops a loop gracefully on SIGTERM and prints one JSON summary line", async () => {
    const run = start(["run", "cli-echo", "--app", APP, "--schema", test.schema]);
    const { id } = await test.store.enqueue(buildNewJob(Echo, { text: "hello" }));
    await eventually(async () => (await test.store.getJob({ id }))?.state === "succeeded", { timeoutMs: 20_000, what: "the job to succeed" });
    run.child.kill("SIGTERM");
    expect(await run.exited).to.deep.equal({ code: ExitCode.Ok, signal: null });
    const lines = run.output.stdout.trimEnd().split("\n");
    expect(lines).to.have.length(1);
    expect(JSON.parse(lines[0]!)).to.include({ mode: "loop", stoppedBecause: "signal", exitCode: 0 });
    expect(run.output.stderr).to.include("stint: SIGTERM received, stopping (send it again to exit at once)");
  });

  it("exits at once with 130 on a second signal", async () => {
    const { id } = await test.store.enqueue(buildNewJob(Hang, {}));
    const run = start(["run", "cli-hang", "--once", "--shutdown-timeout", "60s", "--app", APP, "--schema", test.schema]);
    await eventually(async () => (await test.store.getJob({ id }))?.state === "running", { timeoutMs: 20_000, what: "the job to be running" });
    run.child.kill("SIGTERM");
    await eventually(() => run.output.stderr.includes("SIGTERM received"), { timeoutMs: 20_000, what: "the first signal to be seen" });
    const secondAt = Date.now();
    run.child.kill("SIGTERM");
    expect(await run.exited).to.deep.equal({ code: ExitCode.Interrupted, signal: null });
    expect(Date.now() - secondAt).to.be.below(10_000);
    expect(run.output.stderr).to.include("stint: second SIGTERM, exiting now");
  });

  for (const mode of ["replace", "debounce"] as const) {
    it(`leaves one job carrying an enqueuer's payload when 16 processes enqueue one key at once with --dedupe ${mode}`, async () => {
      const key = `digest:${mode}`;
      const enqueue = (n: number) =>
        start([
          "enqueue",
          "digest",
          JSON.stringify({ n }),
          "--force",
          "--dedupe-key",
          key,
          "--dedupe",
          mode,
          "--delay",
          "1h",
          "--schema",
          test.schema,
          "--json",
        ]);
      const processes = Array.from({ length: 16 }, (_, n) => enqueue(n));
      const outcomes = await Promise.all(processes.map((process) => process.exited));
      expect(
        outcomes.every((outcome) => outcome.code === ExitCode.Ok),
        processes.map((process) => process.output.stderr).join(""),
      ).to.equal(true);
      const results = processes.map((process) => JSON.parse(process.output.stdout) as { id: string; duplicate: boolean; replaced?: boolean });
      expect(new Set(results.map((result) => result.id)).size, "one job for the key").to.equal(1);
      expect(
        results.filter((result) => !result.duplicate),
        "one insert, every other enqueue replaced it",
      ).to.have.length(1);
      expect(results.filter((result) => result.replaced === true)).to.have.length(15);
      const active = await test.store.listJobs({ queue: "digest", states: ["queued", "running", "failed"], limit: 10 });
      expect(active.map((job) => job.id)).to.deep.equal([results[0]!.id]);
      expect((active[0]!.payload as { n: number }).n).to.be.within(0, 15);

      const last = enqueue(99);
      expect((await last.exited).code).to.equal(ExitCode.Ok);
      expect((await test.store.getJob({ id: results[0]!.id }))!.payload, "the last enqueue's payload wins").to.deep.equal({ n: 99 });
    });
  }
});
