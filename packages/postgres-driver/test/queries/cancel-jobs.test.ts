import { expect } from "chai";
import { QueueAdmin } from "@stint/core";
import { CANCEL_BATCH_SIZE } from "@stint/core/internal";
import { newJob } from "@stint/core/testing";
import { loggedStorePerTest } from "../support/logged-store";

describe("a bulk cancel of a queue's waiting jobs", () => {
  const { schema, logged } = loggedStorePerTest();

  async function enqueue(queue: string, count: number): Promise<void> {
    const jobs = Array.from({ length: count }, (_, n) => newJob(queue, { n }, { priority: n % 3 }));
    for (let offset = 0; offset < jobs.length; offset += 5_000) await schema().store.enqueueMany(jobs.slice(offset, offset + 5_000));
  }

  it("cancels 10,000 queued jobs in batches of 1,000, one statement each", async () => {
    await enqueue("mail", 10_000);
    await enqueue("sms", 3);
    const batches: number[] = [];

    const result = await new QueueAdmin(logged().store).cancelWaiting("mail", {
      states: ["queued"],
      max: 10_000,
      onBatch: (cancelled) => batches.push(cancelled),
    });

    expect(result).to.deep.equal({ cancelled: 10_000, interrupted: false });
    expect(CANCEL_BATCH_SIZE).to.equal(1_000);
    expect(logged().statements, "one statement per batch, nothing else").to.have.length(10);
    for (const statement of logged().statements) expect(statement.sql).to.contain("FOR UPDATE SKIP LOCKED");
    expect(batches).to.deep.equal(Array.from({ length: 10 }, (_, n) => (n + 1) * 1_000));
    const [mail, sms] = await schema().store.countByQueue({ queues: ["mail", "sms"] });
    expect(mail!.counts).to.include({ queued: 0, cancelled: 10_000 });
    expect(sms!.counts).to.include({ queued: 3, cancelled: 0 });
  });

  it("without a maximum, stops at the first batch that finds fewer jobs than it asked for", async () => {
    await enqueue("mail", 2_500);
    const result = await new QueueAdmin(logged().store).cancelWaiting("mail", { states: ["queued", "failed"] });
    expect(result.cancelled).to.equal(2_500);
    expect(logged().statements).to.have.length(3);
  });

  it("stops between batches once its signal aborts", async () => {
    await enqueue("mail", 2_500);
    const stop = new AbortController();
    const result = await new QueueAdmin(logged().store).cancelWaiting("mail", { states: ["queued"], signal: stop.signal, onBatch: () => stop.abort() });
    expect(result).to.deep.equal({ cancelled: 1_000, interrupted: true });
    expect(logged().statements).to.have.length(1);
  });

  it("reads its candidates from the claim index in claim order, on a table without statistics", async () => {
    await enqueue("mail", 20_000);
    await new QueueAdmin(logged().store).cancelWaiting("mail", { states: ["queued"], max: 1 });
    const plan = await logged().explain(logged().statements[0]!);
    expect(plan, plan).to.match(/Index Scan using jobs_claim_idx/);
    expect(plan, plan).to.not.match(/Seq Scan on jobs|Sort/);
  });
});
