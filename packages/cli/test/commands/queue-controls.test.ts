import { expect } from "chai";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";
import { enqueueJobs } from "../helpers/job-states";

describe("stint pause, resume and limit", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
  });
  afterEach(() => test.drop());

  it("pauses and resumes queues for every worker, and status shows it", async () => {
    await enqueueJobs(test.store, "mail", 2);
    // sms has no jobs yet: --force pauses it ahead of them.
    const paused = await stint(["pause", "mail", "sms", "--force", "--schema", test.schema]);
    expect(paused.code).to.equal(ExitCode.Ok);
    expect(paused.stdout).to.equal("Paused queue mail.\nPaused queue sms.\n");
    expect(await test.store.claimBatch({ queue: "mail", workerId: "w", limit: 5, leaseMs: 60_000 })).to.have.length(0);

    const status = await stint(["status", "--schema", test.schema, "--json"]);
    const { queues } = status.json() as { queues: { queue: string; paused: boolean; queued: number }[] };
    expect(queues.map(({ queue, paused: isPaused, queued }) => ({ queue, paused: isPaused, queued }))).to.deep.equal([
      { queue: "mail", paused: true, queued: 2 },
      { queue: "sms", paused: true, queued: 0 },
    ]);
    expect((await stint(["status", "--schema", test.schema])).stdout).to.match(/^mail\s.*\spaused$/m);

    const resumed = await stint(["resume", "mail", "--schema", test.schema, "--json"]);
    expect(resumed.json()).to.deep.equal({ queues: [{ queue: "mail", paused: false }] });
    expect(await test.store.claimBatch({ queue: "mail", workerId: "w", limit: 5, leaseMs: 60_000 })).to.have.length(2);
  });

  it("sets, shows and removes a running cap and a rate limit", async () => {
    // api has no jobs yet: --force limits it ahead of them; its control row makes it known from then on.
    const set = await stint(["limit", "api", "--max-running", "3", "--rate", "100/min", "--force", "--schema", test.schema]);
    expect(set.code).to.equal(ExitCode.Ok);
    expect(set.stdout).to.equal("api: max 3 running, 100/min\n");
    const shown = await stint(["limit", "api", "--schema", test.schema, "--json"]);
    expect(shown.json()).to.deep.equal({ queue: "api", paused: false, maxRunning: 3, maxRunningPerGroup: null, rateLimit: "100/min" });
    const removed = await stint(["limit", "api", "--rate", "none", "--max-running", "none", "--schema", test.schema]);
    expect(removed.stdout).to.equal("api: -\n");
  });

  it("refuses a bad cap or rate, naming the option, and changes nothing", async () => {
    const cap = await stint(["limit", "api", "--max-running", "0", "--schema", test.schema]);
    expect(cap.code).to.equal(ExitCode.Config);
    expect(cap.stderr).to.contain("--max-running");
    const rate = await stint(["limit", "api", "--rate", "lots", "--schema", test.schema]);
    expect(rate.code).to.equal(ExitCode.Config);
    expect(rate.stderr).to.contain("--rate").and.contain("100/min");
    expect(await test.store.listQueueControls()).to.deep.equal([]);
  });
});
