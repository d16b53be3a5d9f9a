import { expect } from "chai";
import { newJob } from "@stint/core/testing";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";

describe("stint groups, lines release, and groups in jobs list, jobs show, limit and status", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
  });
  afterEach(() => test.drop());

  /** Three jobs of group acme (two running), one of beta, one of the serial line doc-1 and one without a group. */
  async function fill(): Promise<{ readonly acme: string[]; readonly line: string }> {
    const acme = await test.store.enqueueMany([1, 2, 3].map((n) => newJob("sync", { n }, { groupKey: "acme" })));
    expect(await test.store.claimBatch({ queue: "sync", workerId: "w", limit: 2, leaseMs: 60_000 })).to.have.length(2);
    const [, line] = await test.store.enqueueMany([
      newJob("sync", { n: 3 }, { groupKey: "beta" }),
      newJob("sync", { n: 4 }, { groupKey: "doc-1", serial: "hold" }),
      newJob("sync", { n: 5 }),
    ]);
    return { acme: acme.map((job) => job.id), line: line!.id };
  }

  it("lists a group's or a line's jobs, with a group column only when a listed job has one", async () => {
    const { acme, line } = await fill();
    const listed = await stint(["jobs", "list", "--queue", "sync", "--group", "acme", "--schema", test.schema, "--json"]);
    expect(listed.code).to.equal(ExitCode.Ok);
    const jobs = (listed.json() as { jobs: { id: string; group: string | null; serialKey: string | null }[] }).jobs;
    expect(jobs.map((job) => [job.id, job.group, job.serialKey])).to.deep.equal([...acme].reverse().map((id) => [id, "acme", null]));
    const text = await stint(["jobs", "list", "--queue", "sync", "--serial-key", "doc-1", "--schema", test.schema]);
    expect(text.stdout)
      .to.match(/^\s*id\s+queue\s+group\s+state/m)
      .and.match(new RegExp(`^\\s*${line}\\s+sync\\s+line doc-1\\s+queued`, "m"));
    const plain = await stint(["jobs", "list", "--queue", "sync", "--state", "queued", "--limit", "1", "--schema", test.schema]);
    expect(plain.stdout, "the newest job has no group").to.not.match(/\bgroup\b/);
    const noQueue = await stint(["jobs", "list", "--group", "acme", "--schema", test.schema]);
    expect(noQueue.code).to.equal(ExitCode.Config);
    expect(noQueue.stderr).to.contain("--group needs --queue");
    const both = await stint(["jobs", "list", "--queue", "sync", "--group", "a", "--serial-key", "b", "--schema", test.schema]);
    expect(both.code).to.equal(ExitCode.Config);
  });

  it("shows a job's group or serial key with the command that lists the others", async () => {
    const { acme, line } = await fill();
    const shown = await stint(["jobs", "show", acme[0]!, "--schema", test.schema]);
    expect(shown.stdout).to.match(/^group\s+acme \(stint jobs list --queue sync --group acme\)$/m);
    expect((await stint(["jobs", "show", line, "--schema", test.schema])).stdout).to.match(
      /^serial key\s+doc-1 \(stint jobs list --queue sync --serial-key doc-1\)$/m,
    );
    expect((await stint(["jobs", "show", line, "--schema", test.schema, "--json"])).json()).to.deep.include({ group: null, serialKey: "doc-1" });
  });

  it("sets and removes a cap per group, and status and groups show it", async () => {
    await fill();
    const set = await stint(["limit", "sync", "--max-running-per-group", "2", "--schema", test.schema]);
    expect(set.stdout).to.equal("sync: max 2 per group\n");
    expect((await test.store.listQueueControls())[0]?.maxRunningPerGroup).to.equal(2);
    const status = await stint(["status", "sync", "--schema", test.schema, "--json"]);
    expect((status.json() as { queues: { maxRunningPerGroup: number | null }[] }).queues[0]?.maxRunningPerGroup).to.equal(2);
    expect((await stint(["status", "--schema", test.schema])).stdout).to.match(/^sync\s.*max 2 per group$/m);
    const bad = await stint(["limit", "sync", "--max-running-per-group", "0", "--schema", test.schema]);
    expect(bad.code).to.equal(ExitCode.Config);
    expect(bad.stderr).to.contain("--max-running-per-group");
    const removed = await stint(["limit", "sync", "--max-running-per-group", "none", "--schema", test.schema, "--json"]);
    expect(removed.json()).to.deep.include({ maxRunningPerGroup: null });
  });

  it("lists a queue's busiest groups, and releases a held line, refusing one that is not held", async () => {
    await fill();
    const groups = await stint(["groups", "sync", "--schema", test.schema, "--json"]);
    expect((groups.json() as { groups: unknown[] }).groups).to.deep.equal([
      { key: "acme", serial: false, running: 2, waiting: 1, heldBy: null },
      { key: "beta", serial: false, running: 0, waiting: 1, heldBy: null },
      { key: "doc-1", serial: true, running: 0, waiting: 1, heldBy: null },
    ]);
    const notHeld = await stint(["lines", "release", "sync", "doc-1", "--schema", test.schema, "--json"]);
    expect(notHeld.code).to.equal(ExitCode.WrongState);
    expect(notHeld.stderr).to.contain("STINT_WRONG_STATE").and.contain("is not held");

    await test.store.enqueueMany([1, 2].map((n) => newJob("ledger", { n }, { groupKey: "acct-1", serial: "hold" })));
    const [head] = await test.store.claimBatch({ queue: "ledger", workerId: "w", limit: 5, leaseMs: 60_000 });
    await test.store.markJobsDead({ workerId: "w", jobs: [{ id: head!.id, attempt: head!.attempt, failure: { message: "Error: gone", code: null } }] });
    const held = await stint(["groups", "ledger", "--schema", test.schema]);
    expect(held.stdout).to.match(new RegExp(`^line acct-1\\s+0\\s+1\\s+job ${head!.id}$`, "m"));
    const released = await stint(["lines", "release", "ledger", "acct-1", "--schema", test.schema]);
    expect(released.code).to.equal(ExitCode.Ok);
    expect(released.stdout).to.contain('Released serial line "acct-1" of queue ledger');
    expect((await test.store.listGroups({ queues: ["ledger"], limit: 5 }))[0]?.heldBy).to.equal(null);
    expect((await stint(["groups", "nothing-here", "--schema", test.schema])).stdout).to.contain("No group or serial line");
  });
});
