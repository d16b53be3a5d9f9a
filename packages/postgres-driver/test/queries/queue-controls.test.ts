import { ConfigError, InvalidNameError } from "@stint/core";
import { expect } from "chai";
import { sql } from "kysely";
import { claimBatch, claimBatchStatement, type ControlledQueues } from "../../src/queries/claim-batch";
import { CAP_RETRY_MS } from "../../src/schema/migrations/0007-queue-controls";
import { CONTROLS_APPLY_SQLSTATE } from "../../src/schema/migrations/0011-claim-without-controls";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { newJob } from "@stint/core/testing";

describe("queue controls on PostgreSQL", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ maxConnections: 12 });
  });
  afterEach(async () => {
    await test.drop();
  });

  const enqueue = (queue: string, count: number) => test.store.enqueueMany(Array.from({ length: count }, (_, n) => newJob(queue, { n })));
  const claim = (queue: string, limit: number, workerId = "w1") => test.store.claimBatch({ queue, workerId, limit, leaseMs: 60_000 });
  const runningOf = async (queue: string): Promise<number> => {
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM ${sql.id(test.schema, "jobs")} WHERE queue = ${queue} AND state = 'running'`.execute(test.db);
    return rows[0]!.n;
  };

  it("stores, changes and lists a queue's controls; null removes a cap or a limit", async () => {
    expect(await test.store.listQueueControls()).to.deep.equal([]);
    await test.store.setQueueControls("mail", { maxRunning: 3, rateLimit: { limit: 100, periodMs: 60_000 } });
    const paused = await test.store.setQueueControls("mail", { paused: true });
    expect(paused).to.deep.include({ queue: "mail", paused: true, maxRunning: 3, rateLimit: { limit: 100, periodMs: 60_000 } });
    await test.store.setQueueControls("mail", { maxRunning: null, rateLimit: null });
    const [mail, ...others] = await test.store.listQueueControls();
    expect(others).to.deep.equal([]);
    expect(mail).to.deep.include({ queue: "mail", paused: true, maxRunning: null, rateLimit: null });
  });

  it("changes the controls of a queues row whose name breaks the naming rule, but makes no row under such a name", async () => {
    await sql`INSERT INTO ${sql.id(test.schema, "queues")} (name) VALUES ('Billing / EU')`.execute(test.db);
    expect(await test.store.setQueueControls("Billing / EU", { paused: true, maxRunning: 2 })).to.deep.include({
      queue: "Billing / EU",
      paused: true,
      maxRunning: 2,
    });
    expect((await test.store.setQueueControls("Billing / EU", { paused: false })).paused).to.equal(false);
    const refused = await test.store.setQueueControls("Other Queue", { paused: true }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).to.be.instanceOf(InvalidNameError);
    expect((await test.store.listQueueControls()).map((entry) => entry.queue)).to.deep.equal(["Billing / EU"]);
  });

  it("refuses a cap below 1, a broken rate limit or an unknown field, naming it", async () => {
    const refusal = (change: object) =>
      test.store.setQueueControls("mail", change as never).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    for (const [change, named] of [
      [{ maxRunning: 0 }, /maxRunning/],
      [{ rateLimit: { limit: 10, periodMs: 0 } }, /period/],
      [{ paused: "yes" }, /paused/],
      [{ maxRuning: 3 }, /maxRuning/],
    ] as const) {
      const error = await refusal(change);
      expect(error, JSON.stringify(change)).to.be.instanceOf(ConfigError);
      expect((error as Error).message).to.match(named);
    }
    expect(await test.store.listQueueControls()).to.deep.equal([]);
  });

  it("claims nothing from a paused queue, says so, still takes enqueues, and claims again once resumed", async () => {
    await enqueue("mail", 3);
    await test.store.setQueueControls("mail", { paused: true });
    const held = await claim("mail", 10);
    expect(held).to.have.length(0);
    expect(held.hold).to.deep.equal({ paused: true, retryAfterMs: null });
    await enqueue("mail", 1);
    await test.store.setQueueControls("mail", { paused: false });
    const claimed = await claim("mail", 10);
    expect(claimed).to.have.length(4);
    expect(claimed.hold).to.equal(undefined);
  });

  it("claims a queue without controls in the short form, and switches to the controls' form as soon as a control appears, and back", async () => {
    const controlled: ControlledQueues = new Map();
    const claimOf = (limit: number) => claimBatch(test.statements, test.schema, { queue: "mail", workerId: "w1", limit, leaseMs: 60_000 }, controlled);
    await enqueue("mail", 6);
    expect(await claimOf(1)).to.have.length(1);
    expect(controlled.has("mail"), "no controls: the short form").to.equal(false);
    await test.store.setQueueControls("mail", { paused: true });
    // The short form sees the pause in its own snapshot, raises before it changes anything, and the claim is sent again with the controls.
    const held = await claimOf(5);
    expect(held).to.have.length(0);
    expect(held.hold).to.deep.equal({ paused: true, retryAfterMs: null });
    expect(controlled.has("mail")).to.equal(true);
    expect(await runningOf("mail")).to.equal(1);
    await test.store.setQueueControls("mail", { paused: false, maxRunning: 3 });
    const capped = await claimOf(5);
    expect(capped).to.have.length(2);
    expect(capped.hold).to.deep.equal({ paused: false, retryAfterMs: CAP_RETRY_MS });
    expect(controlled.has("mail"), "a control that held nothing back still keeps the controls' form").to.equal(true);
    await test.store.setQueueControls("mail", { maxRunning: null });
    expect(await claimOf(1)).to.have.length(1);
    expect(controlled.has("mail"), "controls gone: back to the short form").to.equal(false);
    expect(await claimOf(5)).to.have.length(2);
    expect(await runningOf("mail")).to.equal(6);
  });

  it("refuses the short form of a claim for a queue with controls before it changes anything", async () => {
    await enqueue("mail", 2);
    await test.store.setQueueControls("mail", { maxRunning: 1 });
    const short = claimBatchStatement(test.schema, { queue: "mail", workerId: "w1", limit: 2, leaseMs: 60_000 }, "plain");
    const refusal = await short.execute(test.db).then(
      () => undefined,
      (thrown: unknown) => thrown as { code?: string; message?: string },
    );
    expect(refusal?.code).to.equal(CONTROLS_APPLY_SQLSTATE);
    expect(refusal?.message).to.contain("queue mail has controls");
    expect(await runningOf("mail")).to.equal(0);
  });

  it("never lets concurrent claims of many workers take a capped queue past its cap", async () => {
    await enqueue("capped", 60);
    await test.store.setQueueControls("capped", { maxRunning: 3 });
    for (let round = 0; round < 5; round += 1) {
      const batches = await Promise.all(Array.from({ length: 8 }, (_, n) => claim("capped", 2, `w${n}`)));
      expect(await runningOf("capped"), `round ${round}`).to.be.at.most(3);
      expect(batches.flat()).to.have.length(3);
      const held = batches.filter((batch) => batch.hold !== undefined);
      expect(held.length, "claims told to come back later").to.be.at.least(5);
      expect(held.every((batch) => batch.hold?.retryAfterMs === CAP_RETRY_MS)).to.equal(true);
      // Finish what ran, so the next round has free slots again.
      for (const [n, batch] of batches.entries()) {
        if (batch.length > 0)
          await test.store.completeJobs({
            workerId: `w${n}`,
            jobs: batch.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: null, durationMs: 1 })),
          });
      }
      expect(await runningOf("capped")).to.equal(0);
    }
  });

  it("starts at most the burst of a rate limit at once, then as many as the elapsed time allows", async () => {
    await enqueue("limited", 100);
    await test.store.setQueueControls("limited", { rateLimit: { limit: 50, periodMs: 1_000 } });
    const spentFrom = performance.now();
    const first = await claim("limited", 100);
    expect(first, "a burst is a tenth of a second's worth").to.have.length(5);
    expect(first.hold?.retryAfterMs).to.be.within(1, 20);
    const empty = await claim("limited", 100);
    // A token comes back every 20 ms: no more than the time since the burst was spent allows (a slow machine may take 40 ms and more).
    expect(empty.length).to.be.at.most(1 + Math.floor((performance.now() - spentFrom) / 20));
    // As if 60 ms had passed since the bucket was last spent: 3 more tokens.
    await sql`UPDATE ${sql.id(test.schema, "queues")} SET rate_tokens = 0, rate_refilled_at = now() - interval '60 milliseconds'`.execute(test.db);
    expect(await claim("limited", 100)).to.have.length(3);
    // A long idle spell refills the bucket to its burst, no more.
    await sql`UPDATE ${sql.id(test.schema, "queues")} SET rate_refilled_at = now() - interval '1 hour'`.execute(test.db);
    expect(await claim("limited", 100)).to.have.length(5);
  });

  it("claims as before from a queue whose controls row sets nothing", async () => {
    await enqueue("plain", 4);
    await test.store.setQueueControls("plain", { paused: false });
    const claimed = await claim("plain", 10);
    expect(claimed).to.have.length(4);
    expect(claimed.hold).to.equal(undefined);
  });
});
