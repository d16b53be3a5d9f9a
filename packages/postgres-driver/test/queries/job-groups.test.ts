import { expect } from "chai";
import { sql } from "kysely";
import { eventually, newJob } from "@stint/core/testing";
import { defineJob, ConfigError } from "@stint/core";
import { buildNewJob, type NewJob } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { ScriptedWorker, TaskJob } from "../worker-lifecycle/scripted-worker";

describe("groups and serial lines on PostgreSQL", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ maxConnections: 8 });
  });
  afterEach(async () => {
    await test.drop();
  });

  const grouped = (queue: string, group: string, count: number, extra: Partial<NewJob> = {}) =>
    test.store.enqueueMany(Array.from({ length: count }, (_, n) => newJob(queue, { group, n }, { groupKey: group, ...extra })));
  const claim = (queue: string, limit: number, workerId = "w1") => test.store.claimBatch({ queue, workerId, limit, leaseMs: 60_000 });
  const groupOf = (payload: unknown) => (payload as { group?: string }).group ?? "";
  const complete = (jobs: readonly { id: string; attempt: number }[], workerId = "w1") =>
    test.store.completeJobs({ workerId, jobs: jobs.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: null, durationMs: 1 })) });
  const groupRows = async (queue: string) => {
    const { rows } = await sql<{ group_key: string; held_by: string | null }>`SELECT group_key, held_by FROM ${sql.id(test.schema, "job_groups")}
      WHERE queue = ${queue} ORDER BY group_key`.execute(test.db);
    return rows;
  };

  it("serves a group enqueued behind another's backlog in the first claim, and shares each claim evenly", async () => {
    await grouped("mail", "a", 2_000);
    await grouped("mail", "b", 20);
    const first = await claim("mail", 10);
    const counts = first.reduce<Record<string, number>>((all, job) => ({ ...all, [groupOf(job.payload)]: (all[groupOf(job.payload)] ?? 0) + 1 }), {});
    expect(counts).to.deep.equal({ a: 5, b: 5 });
    // Within a group, the claim index's order: the oldest first.
    expect(first.filter((job) => groupOf(job.payload) === "b").map((job) => (job.payload as { n: number }).n)).to.deep.equal([0, 1, 2, 3, 4]);
    await complete(first);
    let bLeft = 15;
    let claims = 1;
    while (bLeft > 0) {
      const jobs = await claim("mail", 10);
      bLeft -= jobs.filter((job) => groupOf(job.payload) === "b").length;
      await complete(jobs);
      claims += 1;
    }
    expect(claims, "claims until b's 20 jobs all ran").to.equal(4);
  });

  it("gives a lone group the whole claim, and jobs without a group a turn of their own beside the groups", async () => {
    await grouped("mail", "a", 30);
    expect(await claim("mail", 10)).to.have.length(10);
    await test.store.enqueueMany([newJob("mail", { n: 1 }), newJob("mail", { n: 2 })]);
    const next = await claim("mail", 10);
    expect(next.filter((job) => groupOf(job.payload) === "")).to.have.length(2);
    expect(next).to.have.length(10);
  });

  it("passes over groups with nothing due or at their cap, so that a claim of one job still finds one", async () => {
    await test.store.setQueueControls("mail", { maxRunningPerGroup: 1 });
    for (const group of ["a", "b", "c", "d"]) await grouped("mail", group, 2, { delayMs: 3_600_000 });
    await grouped("mail", "e", 2);
    const [first] = await claim("mail", 1);
    expect(groupOf(first?.payload)).to.equal("e");
    expect(await claim("mail", 1), "e is at its cap, the rest not due").to.have.length(0);
  });

  it("switches a queue's claims to turns among groups when its first grouped job arrives, with no job lost", async () => {
    await test.store.enqueueMany(Array.from({ length: 5 }, (_, n) => newJob("mail", { n })));
    expect(await claim("mail", 2)).to.have.length(2);
    await grouped("mail", "a", 100);
    await grouped("mail", "b", 3);
    // The claim that finds the queue grouped takes the jobs without a group it was after, and fills the rest by turns.
    const jobs = await claim("mail", 9);
    expect(jobs).to.have.length(9);
    const groups = jobs.map((job) => groupOf(job.payload));
    expect(groups.filter((group) => group === "")).to.have.length(3);
    expect(groups.filter((group) => group === "b")).to.have.length(3);
    expect(groups.filter((group) => group === "a")).to.have.length(3);
  });

  it("never runs more than maxRunningPerGroup of a group at once, across claimers, and lets the next start as one finishes", async () => {
    await test.store.setQueueControls("mail", { maxRunningPerGroup: 2 });
    await grouped("mail", "a", 50);
    await grouped("mail", "b", 50);
    const claims = await Promise.all(["w1", "w2", "w3", "w4"].map((worker) => claim("mail", 10, worker)));
    const all = claims.flat();
    expect(all.filter((job) => groupOf(job.payload) === "a")).to.have.length(2);
    expect(all.filter((job) => groupOf(job.payload) === "b")).to.have.length(2);
    expect(await claim("mail", 10)).to.have.length(0);
    const oneOfA = all.find((job) => groupOf(job.payload) === "a")!;
    const owner = claims.findIndex((batch) => batch.includes(oneOfA));
    await complete([oneOfA], `w${owner + 1}`);
    const next = await claim("mail", 10);
    expect(next.map((job) => groupOf(job.payload))).to.deep.equal(["a"]);
  });

  it("says the queue is empty once nothing is due, and when a held line is all that waits, so a drain ends", async () => {
    await test.store.setQueueControls("mail", { maxRunningPerGroup: 1 });
    await grouped("mail", "a", 2);
    const [first] = await claim("mail", 10);
    expect(await claim("mail", 10), "a's next job waits for its cap").to.have.length(0);
    await complete([first!]);
    await complete(await claim("mail", 10));
    const drained = await claim("mail", 10);
    expect({ jobs: drained.length, hold: drained.hold }, "nothing is due: the claim says the queue is empty").to.deep.equal({ jobs: 0, hold: undefined });

    await test.store.enqueueMany(Array.from({ length: 2 }, (_, n) => newJob("ledger", { n }, { groupKey: "acct-1", serial: "hold" })));
    const [head] = await claim("ledger", 10);
    await test.store.markJobsDead({ workerId: "w1", jobs: [{ id: head!.id, attempt: head!.attempt, failure: { message: "Error: gone", code: null } }] });
    const held = await claim("ledger", 10);
    expect({ jobs: held.length, hold: held.hold }, "a held line waits for an operator, not for a claim").to.deep.equal({ jobs: 0, hold: undefined });
  });

  it("removes a group's row once it has nothing waiting, and brings it back with its next job", async () => {
    await grouped("mail", "a", 2);
    await complete(await claim("mail", 10));
    await claim("mail", 10);
    expect((await groupRows("mail")).map((row) => row.group_key)).to.deep.equal([""]);
    await grouped("mail", "a", 1);
    expect((await groupRows("mail")).map((row) => row.group_key)).to.deep.equal(["", "a"]);
    expect(await claim("mail", 10)).to.have.length(1);
  });

  it("runs a serial line's jobs one at a time, in enqueue order, whatever their priority", async () => {
    await test.store.enqueueMany(Array.from({ length: 4 }, (_, n) => newJob("ledger", { n }, { groupKey: "acct-1", serial: "hold", priority: n })));
    const order: number[] = [];
    for (let turn = 0; turn < 4; turn += 1) {
      const jobs = await claim("ledger", 10);
      expect(jobs, `turn ${turn}`).to.have.length(1);
      expect(await claim("ledger", 10, "w2"), "nothing else of the line while one runs").to.have.length(0);
      order.push((jobs[0]!.payload as { n: number }).n);
      await complete(jobs);
    }
    expect(order).to.deep.equal([0, 1, 2, 3]);
  });

  it("holds a line while its head waits for a retry, and while it is dead until it is retried", async () => {
    await test.store.enqueueMany(Array.from({ length: 3 }, (_, n) => newJob("ledger", { n }, { groupKey: "acct-1", serial: "hold" })));
    const [head] = await claim("ledger", 10);
    await test.store.scheduleRetries({
      workerId: "w1",
      jobs: [{ id: head!.id, attempt: head!.attempt, delayMs: 60_000, failure: { message: "Error: down", code: null }, spendAttempt: true }],
    });
    expect(await claim("ledger", 10), "the head waits for its retry: the line holds").to.have.length(0);
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET run_at = now() WHERE id = ${head!.id}::bigint`.execute(test.db);
    const [again] = await claim("ledger", 10);
    expect(again!.id).to.equal(head!.id);
    await test.store.markJobsDead({ workerId: "w1", jobs: [{ id: again!.id, attempt: again!.attempt, failure: { message: "Error: gone", code: null } }] });
    expect(await claim("ledger", 10), "a dead head holds its line").to.have.length(0);
    expect((await groupRows("ledger")).find((row) => row.group_key === "acct-1")?.held_by).to.equal(head!.id);
    expect(await test.store.retryJob({ id: head!.id })).to.equal(true);
    const [retried] = await claim("ledger", 10);
    expect(retried!.id, "the retried job runs first").to.equal(head!.id);
    await complete([retried!]);
    expect(((await claim("ledger", 10))[0]!.payload as { n: number }).n).to.equal(1);
  });

  it("does not start a line's next job when its head, running as the claim began, goes back to wait for a retry before the claim's turn", async () => {
    // maxRunning makes the claim lock the queue's row before it takes its turns: holding that row pauses a claim that
    // has already taken its snapshot, while the head's attempt fails.
    await test.store.setQueueControls("ledger", { maxRunning: 100 });
    await test.store.enqueueMany(Array.from({ length: 2 }, (_, n) => newJob("ledger", { n }, { groupKey: "acct-1", serial: "hold" })));
    const [head] = await claim("ledger", 10);
    let next: Awaited<ReturnType<typeof claim>> | undefined;
    await test.db.transaction().execute(async (trx) => {
      await sql`SELECT FROM ${sql.id(test.schema, "queues")} WHERE name = 'ledger' FOR UPDATE`.execute(trx);
      const claiming = claim("ledger", 10, "w2").then((jobs) => (next = jobs));
      await eventually(
        async () => {
          const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%claim_group_turns%'`.execute(test.db);
          return rows[0]!.n === 1;
        },
        { timeoutMs: 5_000, what: "the claim to wait for the queue's row" },
      );
      await test.store.scheduleRetries({
        workerId: "w1",
        jobs: [{ id: head!.id, attempt: head!.attempt, delayMs: 60_000, failure: { message: "Error: down", code: null }, spendAttempt: true }],
      });
      void claiming;
    });
    await eventually(async () => next, { timeoutMs: 5_000, what: "the paused claim to end" });
    expect(
      next!.map((job) => (job.payload as { n: number }).n),
      "the head waits for its retry: the line holds",
    ).to.deep.equal([]);
  });

  it("lets the next job of a line that releases on death run once the head dies", async () => {
    await test.store.enqueueMany(Array.from({ length: 2 }, (_, n) => newJob("ledger", { n }, { groupKey: "doc-9", serial: "release" })));
    const [head] = await claim("ledger", 10);
    await test.store.markJobsDead({ workerId: "w1", jobs: [{ id: head!.id, attempt: head!.attempt, failure: { message: "Error: gone", code: null } }] });
    expect(((await claim("ledger", 10))[0]!.payload as { n: number }).n).to.equal(1);
  });

  it("refuses a key used as a group and as a serial key in one queue, writing nothing", async () => {
    await grouped("mail", "acme", 1);
    const refused = await test.store.enqueue(newJob("mail", { n: 2 }, { groupKey: "acme", serial: "hold" })).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(refused).to.be.instanceOf(ConfigError).and.include({ option: "serialKey" });
    expect(refused?.message).to.match(/key 'acme' of queue 'mail' is a group/);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.id(test.schema, "jobs")}`.execute(test.db);
    expect(rows[0]!.n).to.equal(1);
  });

  it("lets a draining worker end once a grouped queue has nothing due, rather than being told to ask again", async () => {
    await test.store.enqueue(buildNewJob(TaskJob, { n: 1 }, { group: "acme" }));
    await test.store.enqueue(buildNewJob(TaskJob, { n: 2 }, { serialKey: "doc-1" }));
    const summary = await new ScriptedWorker(test.store, { process: async () => ({ ok: true }) }).start({ maxRuntimeMs: 5_000 });
    expect(summary).to.include({ succeeded: 2, stoppedBecause: "drained" });
  });

  it("answers a claim of a line that runs a job with nothing, and nothing that asking again soon would change", async () => {
    await test.store.enqueueMany([
      newJob("ledger", { n: 0 }, { groupKey: "acct-1", serial: "hold" }),
      newJob("ledger", { n: 1 }, { groupKey: "acct-1", serial: "hold" }),
    ]);
    expect(await claim("ledger", 10)).to.have.length(1);
    const held = await claim("ledger", 10);
    expect(held).to.have.length(0);
    expect(held.hold).to.equal(undefined);
  });

  it("keeps the group and serial key in the job's record, through the move to the history", async () => {
    const Mail = defineJob<{ to: string }>("mail");
    const { id } = await test.store.enqueue(buildNewJob(Mail, { to: "a@example.com" }, { group: "acme" }));
    const { id: lineId } = await test.store.enqueue(buildNewJob(Mail, { to: "b@example.com" }, { serialKey: "doc-1" }));
    expect(await test.store.getJob({ id })).to.deep.include({ group: "acme", serialKey: null });
    expect(await test.store.getJob({ id: lineId })).to.deep.include({ group: null, serialKey: "doc-1" });
    await complete(await claim("mail", 10));
    expect(await test.store.getJob({ id })).to.deep.include({ state: "succeeded", group: "acme" });
    expect(() => buildNewJob(Mail, { to: "c" }, { group: "a", serialKey: "b" })).to.throw(ConfigError, /serialKey/);
    expect(() => buildNewJob(Mail, { to: "c" }, { serialOnDead: "release" })).to.throw(ConfigError, /serialOnDead/);
  });
});
