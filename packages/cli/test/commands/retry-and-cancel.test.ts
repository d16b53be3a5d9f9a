import { expect } from "chai";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint, type ErrorJson } from "../helpers/run-stint";
import { enqueueJobs, makeDeadJobs, makeRunningJobs, makeSucceededJobs } from "../helpers/job-states";

describe("stint retry and cancel", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 20 });
  });
  afterEach(() => test.drop());

  describe("retry <id>", () => {
    it("queues a dead job again with a fresh attempt budget", async () => {
      const [id] = await makeDeadJobs(test.store, "billing", 1);
      const result = await stint(["retry", id!, "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.equal(`Job ${id} is queued to run again now.\n`);
      expect(await test.store.getJob({ id: id! })).to.include({ state: "queued" });
    });

    it("prints JSON", async () => {
      const [id] = await makeDeadJobs(test.store, "billing", 1);
      expect((await stint(["retry", id!, "--schema", test.schema, "--json"])).json()).to.deep.equal({ id, retried: true });
    });

    it("exits 4 (wrong state) for a job that is still active or has succeeded", async () => {
      const [running] = await makeRunningJobs(test.store, "billing", 1);
      const active = await stint(["retry", running!, "--schema", test.schema]);
      expect(active.code).to.equal(ExitCode.WrongState);
      expect(active.stderr).to.equal(`stint: job ${running} is running: only failed, dead or cancelled jobs can be retried\n`);
      const [done] = await makeSucceededJobs(test.store, "billing", 1);
      const succeeded = await stint(["retry", done!, "--schema", test.schema]);
      expect(succeeded.code).to.equal(ExitCode.WrongState);
      expect(succeeded.stderr).to.include(`job ${done} has succeeded`);
    });

    it("exits 3 (not found) for a job that does not exist", async () => {
      const result = await stint(["retry", "424242", "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.NotFound);
      expect(result.stderr).to.equal(`stint: job 424242 not found in schema "${test.schema}"\n`);
    });

    it("prints a failure as one JSON document on stderr with --json, with the same exit codes", async () => {
      const missing = await stint(["retry", "424242", "--schema", test.schema, "--json"]);
      expect(missing.code).to.equal(ExitCode.NotFound);
      expect(missing.stdout).to.equal("");
      expect(JSON.parse(missing.stderr)).to.deep.equal({ error: { code: "STINT_NOT_FOUND", message: `job 424242 not found in schema "${test.schema}"` } });
      const [running] = await makeRunningJobs(test.store, "billing", 1);
      const active = await stint(["retry", running!, "--schema", test.schema, "--json"]);
      expect(active.code).to.equal(ExitCode.WrongState);
      expect(JSON.parse(active.stderr)).to.deep.equal({
        error: { code: "STINT_WRONG_STATE", message: `job ${running} is running: only failed, dead or cancelled jobs can be retried` },
      });
    });

    it("needs an id or --dead (exit 2)", async () => {
      expect((await stint(["retry", "--schema", test.schema])).code).to.equal(ExitCode.Usage);
      expect((await stint(["retry", "5", "--dead", "q", "--schema", test.schema])).stderr).to.include("give either a job id or --dead <queue>, not both");
      expect((await stint(["retry", "5", "--limit", "3", "--schema", test.schema])).stderr).to.include("--limit goes with --dead <queue>");
    });
  });

  describe("retry --dead <queue>", () => {
    it("queues every dead job of the queue in batches of 500", async () => {
      await makeDeadJobs(test.store, "billing", 1_100);
      await makeDeadJobs(test.store, "other", 3);
      const result = await stint(["retry", "--dead", "billing", "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.equal("1,100 dead jobs of billing are queued to run again now.\n");
      const counts = await test.store.countByQueue({ queues: ["billing", "other"] });
      expect(counts[0]!.counts).to.include({ dead: 0, queued: 1_100 });
      expect(counts[1]!.counts).to.include({ dead: 3 });
    });

    it("stops at --limit and prints JSON", async () => {
      await makeDeadJobs(test.store, "billing", 30);
      const result = await stint(["retry", "--dead", "billing", "--limit", "12", "--schema", test.schema, "--json"]);
      expect(result.json()).to.deep.equal({ queue: "billing", retried: 12, interrupted: false });
      const [counts] = await test.store.countByQueue({ queues: ["billing"] });
      expect(counts!.counts).to.include({ dead: 18, queued: 12 });
    });

    it("says when there is nothing to retry", async () => {
      const result = await stint(["retry", "--dead", "billing", "--schema", test.schema]);
      expect(result.stdout).to.equal("No dead jobs of billing to retry.\n");
    });

    it("draws a progress bar on a terminal", async () => {
      await makeDeadJobs(test.store, "billing", 600);
      const result = await stint(["retry", "--dead", "billing", "--schema", test.schema], { tty: true });
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stderr).to.include("retry dead billing [");
      expect(result.stderr).to.include("600/600 jobs");
    });
  });

  describe("cancel <id>", () => {
    it("cancels a queued job", async () => {
      const [id] = await enqueueJobs(test.store, "mail", 1);
      const result = await stint(["cancel", id!, "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.equal(`Cancelled job ${id}.\n`);
      expect(await test.store.getJob({ id: id! })).to.include({ state: "cancelled" });
    });

    it("cancels a running job and prints JSON", async () => {
      const [id] = await makeRunningJobs(test.store, "mail", 1);
      expect((await stint(["cancel", id!, "--schema", test.schema, "--json"])).json()).to.deep.equal({ id, cancelled: true });
    });

    it("exits 4 for a finished job and 3 for one that does not exist", async () => {
      const [done] = await makeSucceededJobs(test.store, "mail", 1);
      const finished = await stint(["cancel", done!, "--schema", test.schema]);
      expect(finished.code).to.equal(ExitCode.WrongState);
      expect(finished.stderr).to.equal(`stint: job ${done} has already finished (succeeded): only queued, running or failed jobs can be cancelled\n`);
      const missing = await stint(["cancel", "999999", "--schema", test.schema]);
      expect(missing.code).to.equal(ExitCode.NotFound);
      expect(missing.stderr).to.equal(`stint: job 999999 not found in schema "${test.schema}"\n`);
    });

    it("prints the failure as JSON with --json", async () => {
      const [done] = await makeSucceededJobs(test.store, "mail", 1);
      const finished = await stint(["cancel", done!, "--schema", test.schema, "--json"]);
      expect(finished.code).to.equal(ExitCode.WrongState);
      expect((JSON.parse(finished.stderr) as ErrorJson).error).to.include({ code: "STINT_WRONG_STATE" });
      const missing = await stint(["cancel", "999999", "--schema", test.schema, "--json"]);
      expect(missing.code).to.equal(ExitCode.NotFound);
      expect((JSON.parse(missing.stderr) as ErrorJson).error).to.include({ code: "STINT_NOT_FOUND" });
    });
  });
});
