import { expect } from "chai";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint, type ErrorJson } from "../helpers/run-stint";
import { enqueueJobs, makeDeadJobs, makeRetryingJobs, makeRunningJobs, makeSucceededJobs } from "../helpers/job-states";

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

  describe("cancel <id…>", () => {
    it("cancels several jobs and prints a count", async () => {
      const [queued] = await enqueueJobs(test.store, "mail", 1);
      const [running] = await makeRunningJobs(test.store, "sms", 1);
      const [retrying] = await makeRetryingJobs(test.store, "push", 1);
      const result = await stint(["cancel", queued!, running!, retrying!, "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.equal(
        [
          `Cancelled job ${queued}.`,
          `Cancelled job ${running}; it was running, and its worker is told to stop it.`,
          `Cancelled job ${retrying}.`,
          "Cancelled 3 of 3 jobs.",
          "",
        ].join("\n"),
      );
      for (const id of [queued!, running!, retrying!]) expect((await test.store.getJob({ id }))?.state).to.equal("cancelled");
    });

    it("cancels the others when some have finished or do not exist, and exits 3 (not found) before 4 (finished)", async () => {
      const [done] = await makeSucceededJobs(test.store, "mail", 1);
      const [queued] = await enqueueJobs(test.store, "mail", 1);
      const finished = await stint(["cancel", done!, queued!, "--schema", test.schema]);
      expect(finished.code).to.equal(ExitCode.WrongState);
      expect(finished.stdout).to.equal(`Cancelled job ${queued}.\nCancelled 1 of 2 jobs.\n`);
      expect(finished.stderr).to.equal(`stint: job ${done} has already finished (succeeded): only blocked, queued, running or failed jobs can be cancelled\n`);

      const [another] = await enqueueJobs(test.store, "mail", 1);
      const json = await stint(["cancel", done!, "999999", another!, "--schema", test.schema, "--json"]);
      expect(json.code).to.equal(ExitCode.NotFound);
      expect(json.json()).to.deep.equal({
        cancelled: 1,
        jobs: [
          {
            id: done,
            cancelled: false,
            code: "STINT_WRONG_STATE",
            message: `job ${done} has already finished (succeeded): only blocked, queued, running or failed jobs can be cancelled`,
          },
          { id: "999999", cancelled: false, code: "STINT_NOT_FOUND", message: `job 999999 not found in schema "${test.schema}"` },
          { id: another, cancelled: true, wasRunning: false },
        ],
      });
      expect((await test.store.getJob({ id: another! }))?.state).to.equal("cancelled");
    });

    it("refuses an id that is not one, before cancelling anything (exit 2)", async () => {
      const [queued] = await enqueueJobs(test.store, "mail", 1);
      const result = await stint(["cancel", queued!, "seven", "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.Usage);
      expect(result.stderr).to.include('job id must be a positive integer, got "seven"');
      expect((await test.store.getJob({ id: queued! }))?.state).to.equal("queued");
    });
  });

  describe("cancel --queue <queue> --state …", () => {
    it("cancels the queue's waiting jobs in the given states, in batches, and prints the count", async () => {
      await enqueueJobs(test.store, "mail", 2_500);
      const retrying = await makeRetryingJobs(test.store, "mail", 2);
      const [running] = await makeRunningJobs(test.store, "mail", 1);
      await enqueueJobs(test.store, "other", 3);

      const queuedOnly = await stint(["cancel", "--queue", "mail", "--state", "queued", "--schema", test.schema]);
      expect(queuedOnly.code).to.equal(ExitCode.Ok);
      expect(queuedOnly.stdout).to.equal("Cancelled 2,500 queued jobs of mail.\n");
      const [mail, other] = await test.store.countByQueue({ queues: ["mail", "other"] });
      expect(mail!.counts).to.include({ queued: 0, failed: 2, running: 1, cancelled: 2_500 });
      expect(other!.counts).to.include({ queued: 3, cancelled: 0 });

      const both = await stint(["cancel", "--queue", "mail", "--state", "queued,failed", "--schema", test.schema, "--json"]);
      expect(both.json()).to.deep.equal({ queue: "mail", states: ["queued", "failed"], cancelled: 2, interrupted: false });
      for (const id of retrying) expect((await test.store.getJob({ id }))?.state).to.equal("cancelled");
      expect((await test.store.getJob({ id: running! }))?.state).to.equal("running");
      expect((await stint(["cancel", "--queue", "mail", "--state", "queued", "--schema", test.schema])).stdout).to.equal("No queued jobs of mail to cancel.\n");
    });

    it("stops at --limit", async () => {
      await enqueueJobs(test.store, "mail", 30);
      const result = await stint(["cancel", "--queue", "mail", "--state", "queued", "--limit", "12", "--schema", test.schema]);
      expect(result.stdout).to.equal("Cancelled 12 queued jobs of mail.\n");
      const [counts] = await test.store.countByQueue({ queues: ["mail"] });
      expect(counts!.counts).to.include({ queued: 18, cancelled: 12 });
    });

    it("never cancels running jobs in bulk, and needs --state (exit 78, exit 2)", async () => {
      const [running] = await makeRunningJobs(test.store, "mail", 1);
      const refused = await stint(["cancel", "--queue", "mail", "--state", "queued,running", "--schema", test.schema]);
      expect(refused.code).to.equal(ExitCode.Config);
      expect(refused.stderr).to.include("running jobs are cancelled by id");
      expect((await test.store.getJob({ id: running! }))?.state).to.equal("running");
      const missing = await stint(["cancel", "--queue", "mail", "--schema", test.schema]);
      expect(missing.code).to.equal(ExitCode.Usage);
      expect(missing.stderr).to.include("--queue needs --state");
      expect((await stint(["cancel", "5", "--queue", "mail", "--state", "queued", "--schema", test.schema])).stderr).to.include(
        "give either job ids or --queue <queue>, not both",
      );
      expect((await stint(["cancel", "5", "--state", "queued", "--schema", test.schema])).stderr).to.include("--state goes with --queue <queue>");
      expect((await stint(["cancel", "--schema", test.schema])).code).to.equal(ExitCode.Usage);
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

    it("cancels a running job, says its worker is told to stop it, and prints JSON", async () => {
      const [id, other] = await makeRunningJobs(test.store, "mail", 2);
      expect((await stint(["cancel", id!, "--schema", test.schema, "--json"])).json()).to.deep.equal({ id, cancelled: true, wasRunning: true });
      const text = await stint(["cancel", other!, "--schema", test.schema]);
      expect(text.stdout).to.equal(`Cancelled job ${other}; it was running, and its worker is told to stop it.\n`);
      expect((await test.store.listAttempts({ jobId: other! })).map((attempt) => attempt.outcome)).to.deep.equal(["cancelled"]);
    });

    it("exits 4 for a finished job and 3 for one that does not exist", async () => {
      const [done] = await makeSucceededJobs(test.store, "mail", 1);
      const finished = await stint(["cancel", done!, "--schema", test.schema]);
      expect(finished.code).to.equal(ExitCode.WrongState);
      expect(finished.stderr).to.equal(`stint: job ${done} has already finished (succeeded): only blocked, queued, running or failed jobs can be cancelled\n`);
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
