import { expect } from "chai";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";
import { enqueueJobs, makeDeadJobs, makeJobThatSucceededThirdTime } from "../helpers/job-states";

/** What `stint jobs list --json` prints (the fields these tests read). */
interface JobList {
  readonly jobs: readonly { readonly id: string }[];
  readonly nextBeforeId: string | null;
}

/** What `stint jobs show --json` prints (the fields these tests read). */
interface ShownJob {
  readonly lastError: string;
  readonly finishedAt: string;
  readonly meta: unknown;
  readonly progress: unknown;
  readonly history: readonly {
    readonly attempt: number;
    readonly outcome: string;
    readonly workerId: string;
    readonly durationMs: number;
    readonly error: unknown;
    readonly startedAt: string;
  }[];
}

describe("stint jobs", () => {
  let test: TestSchema;
  let queued: string[];
  let dead: string[];

  before(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
    queued = await enqueueJobs(test.store, "mail", 5);
    dead = await makeDeadJobs(test.store, "billing", 2);
  });
  after(() => test.drop());

  describe("list", () => {
    it("lists jobs newest first in a table", async () => {
      const result = await stint(["jobs", "list", "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.Ok);
      const lines = result.stdout.trimEnd().split("\n");
      expect(lines[0]).to.match(/^\s*id\s+queue\s+state\s+attempts\s+priority\s+run at\s+finished at\s+last error$/);
      expect(lines).to.have.length(2 + 7);
      expect(lines[2]).to.match(
        new RegExp(`^\\s*${dead[1]}\\s+billing\\s+dead\\s+1/25\\s+0\\s+\\S+ \\S+Z\\s+\\S+ \\S+Z\\s+Error: card declined for ${dead[1]}…$`),
      );
      expect(lines[8]).to.match(new RegExp(`^\\s*${queued[0]}\\s+mail\\s+queued\\s+0/25\\s+0\\s+\\S+ \\S+Z\\s+-$`));
    });

    it("filters by queue and state", async () => {
      const result = await stint(["jobs", "list", "--queue", "billing", "--state", "dead,failed", "--schema", test.schema, "--json"]);
      expect(result.code).to.equal(ExitCode.Ok);
      const { jobs } = result.json() as JobList;
      expect(jobs.map((job) => job.id)).to.deep.equal([...dead].reverse());
      expect((await stint(["jobs", "list", "--state", "running", "--schema", test.schema])).stdout).to.equal("No jobs match.\n");
    });

    it("pages with --before-id", async () => {
      const first = await stint(["jobs", "list", "--queue", "mail", "--limit", "2", "--schema", test.schema]);
      expect(first.stdout).to.include(`More: add --before-id ${queued[3]} for the next page.`);
      const page = await stint(["jobs", "list", "--queue", "mail", "--limit", "2", "--before-id", queued[3]!, "--schema", test.schema, "--json"]);
      const { jobs, nextBeforeId } = page.json() as JobList;
      expect(jobs.map((job) => job.id)).to.deep.equal([queued[2], queued[1]]);
      expect(nextBeforeId).to.equal(queued[1]);
    });

    it("refuses an unknown state naming the known ones (exit 78)", async () => {
      const result = await stint(["jobs", "list", "--state", "done", "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.Config);
      expect(result.stderr).to.include('--state: unknown state "done" (states: blocked, queued, running, failed, succeeded, dead, cancelled)');
    });
  });

  describe("show", () => {
    it("prints every field and the last error in full", async () => {
      const result = await stint(["jobs", "show", dead[0]!, "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.match(new RegExp(`^id\\s+${dead[0]}\\n`));
      expect(result.stdout).to.match(/\nstate\s+dead\n/);
      expect(result.stdout).to.match(/\nattempts\s+1 of 25\n/);
      expect(result.stdout).to.match(/\nerror code\s+STINT_PERMANENT\n/);
      expect(result.stdout).to.include('payload:\n  {\n    "n": 0\n  }\n');
      expect(result.stdout).to.include(`last error:\n  Error: card declined for ${dead[0]}\n      at charge (billing.ts:12:5)\n`);
    });

    it("prints the job as JSON", async () => {
      const job = (await stint(["jobs", "show", dead[0]!, "--schema", test.schema, "--json"])).json() as ShownJob;
      expect(job).to.include({ id: dead[0], queue: "billing", state: "dead", attempts: 1, maxAttempts: 25, errorCode: "STINT_PERMANENT" });
      expect(job.lastError).to.include("at charge (billing.ts:12:5)");
      expect(job.finishedAt).to.match(/^\d{4}-\d\d-\d\dT/);
      expect(Object.keys(job)).to.include.members([
        "runAt",
        "timeoutMs",
        "lockedBy",
        "lockedUntil",
        "dedupeKey",
        "result",
        "createdAt",
        "startedAt",
        "durationMs",
        "updatedAt",
      ]);
    });

    it("prints the attempts, meta and progress of a job that failed twice and then succeeded", async () => {
      const id = await makeJobThatSucceededThirdTime(test.store, "charge", { tenant: "acme" });
      const result = await stint(["jobs", "show", id, "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.match(/\nprogress\s+\{"of":10,"done":10\}\n/); // jsonb orders keys by length
      expect(result.stdout).to.include('meta:\n  {\n    "tenant": "acme"\n  }\n');
      const table = result.stdout.split("attempts:\n")[1]!.split("\n").slice(0, 5);
      expect(table[0]).to.match(/^\s+attempt\s+outcome\s+worker\s+started\s+duration\s+error$/);
      expect(table[2]).to.match(/^\s+1\s+failed\s+w1\s+\S+ \S+Z\s+41ms\s+Error: gateway timeout \(w1\)$/);
      expect(table[3]).to.match(/^\s+2\s+failed\s+w2\s+\S+ \S+Z\s+52ms\s+Error: gateway timeout \(w2\)$/);
      expect(table[4]).to.match(/^\s+3\s+succeeded\s+w3\s+\S+ \S+Z\s+63ms\s+-$/);
    });

    it("prints the attempts as JSON", async () => {
      const id = await makeJobThatSucceededThirdTime(test.store, "charge", { tenant: "globex" });
      const job = (await stint(["jobs", "show", id, "--schema", test.schema, "--json"])).json() as ShownJob;
      expect(job).to.include({ id, state: "succeeded", attempts: 3 });
      expect(job.meta).to.deep.equal({ tenant: "globex" });
      expect(job.progress).to.deep.equal({ done: 10, of: 10 });
      expect(job.history.map((a) => [a.attempt, a.outcome, a.workerId, a.durationMs])).to.deep.equal([
        [1, "failed", "w1", 41],
        [2, "failed", "w2", 52],
        [3, "succeeded", "w3", 63],
      ]);
      expect(job.history[0]!.error).to.deep.equal({
        message: "Error: gateway timeout (w1)",
        code: "STINT_TIMEOUT",
        stack: "Error: gateway timeout (w1)\n    at charge (billing.ts:12:5)",
      });
      expect(job.history[0]!.startedAt).to.match(/^\d{4}-\d\d-\d\dT/);
      expect(job.history[2]!.error).to.equal(null);
    });

    it("exits 3 when the job does not exist, 2 when the id is not one", async () => {
      const missing = await stint(["jobs", "show", "987654321", "--schema", test.schema]);
      expect(missing.code).to.equal(ExitCode.NotFound);
      expect(missing.stderr).to.equal(`stint: job 987654321 not found in schema "${test.schema}"\n`);
      const bad = await stint(["jobs", "show", "abc", "--schema", test.schema]);
      expect(bad.code).to.equal(ExitCode.Usage);
      expect(bad.stderr).to.include('job id must be a positive integer, got "abc"');
    });

    it("prints a missing job as a JSON error with --json (exit 3)", async () => {
      const missing = await stint(["jobs", "show", "987654321", "--schema", test.schema, "--json"]);
      expect(missing.code).to.equal(ExitCode.NotFound);
      expect(missing.stdout).to.equal("");
      expect(JSON.parse(missing.stderr)).to.deep.equal({
        error: { code: "STINT_NOT_FOUND", message: `job 987654321 not found in schema "${test.schema}"` },
      });
    });
  });
});
