import { join } from "node:path";
import { expect } from "chai";
import { buildNewJob } from "@stint/core/driver";
import { defineJob } from "@stint/core";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";

const APP = join(__dirname, "..", "fixtures", "test-app.js");

describe("stint retention, and dead-letter links in stint jobs show", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
  });
  afterEach(() => test.drop());

  it("sets, shows and resets a queue's own retention per state, and status shows it", async () => {
    const set = await stint(["retention", "audit", "--dead-days", "365", "--succeeded-days", "90", "--force", "--schema", test.schema]);
    expect(set.code).to.equal(ExitCode.Ok);
    expect(set.stdout).to.equal("audit: keeps succeeded 90d, dead 365d\n");
    expect((await test.store.listQueueControls())[0]!.retention).to.deep.equal({ succeededDays: 90, deadDays: 365, cancelledDays: null });

    const shown = await stint(["retention", "audit", "--schema", test.schema, "--json"]);
    expect(shown.json()).to.deep.equal({ queue: "audit", retentionDays: { succeededDays: 90, deadDays: 365, cancelledDays: null } });
    const status = await stint(["status", "--schema", test.schema, "--json"]);
    const { queues } = status.json() as { queues: { queue: string; retentionDays: unknown }[] };
    expect(queues.map(({ queue, retentionDays }) => ({ queue, retentionDays }))).to.deep.equal([
      { queue: "audit", retentionDays: { succeededDays: 90, deadDays: 365, cancelledDays: null } },
    ]);
    expect((await stint(["status", "--schema", test.schema])).stdout).to.match(/^audit\s.*keeps succeeded 90d, dead 365d$/m);

    const reset = await stint(["retention", "audit", "--succeeded-days", "global", "--dead-days", "global", "--schema", test.schema]);
    expect(reset.stdout).to.equal("audit: keeps finished jobs as the global retention\n");
  });

  it("lists every queue's retention from the database without a queue: its own days, or the global ones", async () => {
    await stint(["retention", "audit", "--dead-days", "365", "--succeeded-days", "90", "--force", "--schema", test.schema]);
    await stint(["retention", "thumbs", "--cancelled-days", "0", "--force", "--schema", test.schema]);
    await test.store.enqueue(buildNewJob(defineJob<{ n: number }>("mail"), { n: 1 }));

    const listed = await stint(["retention", "--schema", test.schema]);
    expect(listed.code).to.equal(ExitCode.Ok);
    expect(listed.stdout.split("\n")).to.deep.equal([
      "queue   succeeded    dead          cancelled",
      "------  -----------  ------------  -----------",
      "audit   90d (own)    365d (own)    7d (global)",
      "mail    7d (global)  30d (global)  7d (global)",
      "thumbs  7d (global)  30d (global)  0d (own)",
      "Global: the retention of stint run's maintenance pass (succeeded and cancelled 7d, dead 30d); " +
        "stint prune keeps its --succeeded-days, --dead-days and --cancelled-days there (default 7, 30, 30).",
      "",
    ]);

    const json = (await stint(["retention", "--app", APP, "--schema", test.schema, "--json"])).json() as {
      global: unknown;
      queues: { queue: string; retentionDays: unknown; effectiveDays: unknown }[];
    };
    expect(json.global).to.deep.equal({
      maintenance: { succeededDays: 7, deadDays: 30, cancelledDays: 7 },
      prune: { succeededDays: 7, deadDays: 30, cancelledDays: 30 },
    });
    expect(
      json.queues.map((entry) => entry.queue),
      "the app's queues too",
    ).to.deep.equal(["audit", "cli-echo", "cli-hang", "mail", "thumbs"]);
    expect(json.queues[0]).to.deep.equal({
      queue: "audit",
      retentionDays: { succeededDays: 90, deadDays: 365, cancelledDays: null },
      effectiveDays: { succeededDays: 90, deadDays: 365, cancelledDays: 7 },
    });
  });

  it("refuses days without a queue (exit 2)", async () => {
    const refused = await stint(["retention", "--dead-days", "3", "--schema", test.schema]);
    expect(refused.code).to.equal(ExitCode.Usage);
    expect(refused.stderr).to.contain("name the queue whose retention to set");
  });

  it("refuses a bad number of days, naming the option, and changes nothing", async () => {
    for (const [option, value] of [
      ["--dead-days", "-1"],
      ["--succeeded-days", "1.5"],
      ["--cancelled-days", "36501"],
      ["--dead-days", "forever"],
    ] as const) {
      const refused = await stint(["retention", "audit", `${option}=${value}`, "--force", "--schema", test.schema]);
      expect(refused.code, `${option} ${value}`).to.equal(ExitCode.Config);
      expect(refused.stderr).to.contain(option);
    }
    expect(await test.store.listQueueControls()).to.deep.equal([]);
  });

  it("keeps a queue's jobs by its own days in stint prune", async () => {
    const kind = defineJob<{ n: number }>("audit");
    const { id } = await test.store.enqueue(buildNewJob(kind, { n: 1 }));
    await test.store.cancelJob({ id });
    await stint(["retention", "audit", "--cancelled-days", "5", "--schema", test.schema]);
    const pruned = await stint(["prune", "--cancelled-days", "0", "--schema", test.schema, "--json"]);
    expect((pruned.json() as { deleted: { cancelled: number } }).deleted.cancelled).to.equal(0);
    expect(await test.store.getJob({ id })).to.include({ state: "cancelled" });
    await stint(["retention", "audit", "--cancelled-days", "0", "--schema", test.schema]);
    const again = await stint(["prune", "--cancelled-days", "30", "--schema", test.schema, "--json"]);
    expect((again.json() as { deleted: { cancelled: number } }).deleted.cancelled).to.equal(1);
  });

  it("links a dead job to its dead-letter copy, and the copy back to it", async () => {
    const Refund = defineJob<{ n: number }>("refund", { deadLetterQueue: "refund-dead" });
    const { id } = await test.store.enqueue(buildNewJob(Refund, { n: 1 }));
    const [job] = await test.store.claimBatch({ queue: "refund", workerId: "w", limit: 1, leaseMs: 60_000 });
    await test.store.markJobsDead({
      workerId: "w",
      jobs: [{ id, attempt: job!.attempt, failure: { message: "PermanentError: no such card", code: "STINT_PERMANENT" } }],
    });
    const [copy] = await test.store.listJobs({ queue: "refund-dead", limit: 1 });

    const dead = await stint(["jobs", "show", id, "--schema", test.schema]);
    expect(dead.stdout).to.match(/^dead-letter queue\s+refund-dead$/m);
    expect(dead.stdout).to.match(new RegExp(`^dead-letter copy\\s+job ${copy!.id} \\(stint jobs show ${copy!.id}\\)$`, "m"));
    const back = await stint(["jobs", "show", copy!.id, "--schema", test.schema]);
    expect(back.stdout).to.match(new RegExp(`^dead-letter of\\s+job ${id} \\(refund, STINT_PERMANENT\\): PermanentError: no such card$`, "m"));
    const json = await stint(["jobs", "show", id, "--schema", test.schema, "--json"]);
    expect((json.json() as { deadLetter: unknown }).deadLetter).to.deep.equal({ queue: "refund-dead", copyId: copy!.id, origin: null });
  });
});
