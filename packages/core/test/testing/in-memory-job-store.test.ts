import { expect } from "chai";
import { ConfigError } from "../../src/errors/config-errors";
import { buildNewJob, type EnqueueOptions } from "../../src/job/enqueue-options";
import { defineJob } from "../../src/job/job-definition";
import { JobClient } from "../../src/client/job-client";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { settle } from "../../src/testing/settle";

const Report = defineJob<{ readonly reportId: number }>("build-report", { maxAttempts: 5 });

/** The rejection of `promise`, or `undefined` when it resolved. */
function rejectionOf(promise: Promise<unknown>): Promise<Error | undefined> {
  return promise.then(
    () => undefined,
    (thrown: unknown) => thrown as Error,
  );
}

describe("InMemoryJobStore", () => {
  let clock: ManualClock;
  let store: InMemoryJobStore;

  beforeEach(() => {
    clock = new ManualClock();
    store = new InMemoryJobStore({ clock });
  });

  const job = (reportId: number, options: EnqueueOptions = {}) => buildNewJob(Report, { reportId }, options);

  describe("transactions", () => {
    it("writes a job enqueued in a transaction, and what was handed to onCommit, only when it commits", async () => {
      const written: string[] = [];
      const id = await store.transaction(async (trx) => {
        const { id: enqueued } = await new JobClient(store).enqueue(Report, { reportId: 1 }, { transaction: trx });
        trx.onCommit(() => written.push("report row"));
        expect(await store.getJob({ id: enqueued }), "not yet").to.equal(undefined);
        expect(written).to.deep.equal([]);
        return enqueued;
      });
      expect(await store.getJob({ id })).to.include({ state: "queued" });
      expect(written).to.deep.equal(["report row"]);
    });

    it("drops every write of a transaction that throws, and rethrows", async () => {
      const written: string[] = [];
      const failure = new Error("the report table is locked");
      const error = await rejectionOf(
        store.transaction(async (trx) => {
          await store.enqueue(job(1), trx);
          trx.onCommit(() => written.push("report row"));
          throw failure;
        }),
      );
      expect(error).to.equal(failure);
      expect(written).to.deep.equal([]);
      expect(await store.listJobs({ limit: 10 })).to.deep.equal([]);
    });

    it("makes an enqueue of a dedupe key an open transaction holds wait for it, then find its job", async () => {
      let commit!: () => void;
      const committing = new Promise<void>((resolve) => (commit = resolve));
      let inside = "";
      const transaction = store.transaction(async (trx) => {
        inside = (await store.enqueue(job(1, { dedupeKey: "report:1" }), trx)).id;
        await committing;
      });
      await settle();
      let outside: { id: string; duplicate: boolean } | undefined;
      const waiting = store.enqueue(job(2, { dedupeKey: "report:1" })).then((result) => (outside = result));
      await settle();
      expect(outside, "it waits for the transaction").to.equal(undefined);
      commit();
      await Promise.all([transaction, waiting]);
      expect(outside).to.deep.equal({ id: inside, duplicate: true });
    });

    it("lets the waiting enqueue insert once the transaction holding the key rolls back", async () => {
      let rollBack!: () => void;
      const rollingBack = new Promise<void>((resolve) => (rollBack = resolve));
      const transaction = rejectionOf(
        store.transaction(async (trx) => {
          await store.enqueue(job(1, { dedupeKey: "report:1" }), trx);
          await rollingBack;
          throw new Error("changed my mind");
        }),
      );
      await settle();
      const waiting = store.enqueue(job(2, { dedupeKey: "report:1" }));
      rollBack();
      await transaction;
      const { id, duplicate } = await waiting;
      expect(duplicate).to.equal(false);
      expect((await store.getJob({ id }))?.payload).to.deep.equal({ reportId: 2 });
    });

    it("refuses a transaction that has ended, and anything that is not one of its transactions", async () => {
      let kept: unknown;
      await store.transaction(async (trx) => {
        kept = trx;
      });
      expect(await rejectionOf(store.enqueue(job(1), kept as never))).to.be.instanceOf(ConfigError);
      expect((await rejectionOf(store.enqueue(job(1), {} as never)))?.message).to.contain("MemoryTransaction");
    });
  });

  describe("dedupe modes", () => {
    it("replaces a queued holder's payload, run time and priority, and gives one that started a follow-up", async () => {
      const { id } = await store.enqueue(job(1, { dedupeKey: "k", priority: 1 }));
      const replaced = await store.enqueue(job(2, { dedupeKey: "k", dedupe: "replace", priority: 5, delayMs: 60_000 }));
      expect(replaced).to.deep.equal({ id, duplicate: true, replaced: true });
      const record = await store.getJob({ id });
      expect(record).to.include({ priority: 5 });
      expect(record?.payload).to.deep.equal({ reportId: 2 });
      expect(record!.runAt.getTime()).to.equal(clock.now() + 60_000);

      await clock.advance(60_000);
      await store.claimBatch({ queue: Report.name, workerId: "w", limit: 1, leaseMs: 60_000 });
      const followUp = await store.enqueue(job(3, { dedupeKey: "k", dedupe: "replace" }));
      expect(followUp.duplicate).to.equal(false);
      expect(followUp.id).to.not.equal(id);
      expect((await store.getJob({ id }))?.payload, "a running job is kept as it is").to.deep.equal({ reportId: 2 });
      expect((await store.getJob({ id: followUp.id }))?.payload).to.deep.equal({ reportId: 3 });
    });

    it("debounces: each enqueue of the key pushes the one job's run time back", async () => {
      const first = await store.enqueue(job(1, { dedupeKey: "k", dedupe: "debounce", delayMs: 5_000 }));
      await clock.advance(3_000);
      const second = await store.enqueue(job(2, { dedupeKey: "k", dedupe: "debounce", delayMs: 5_000 }));
      expect(second.id).to.equal(first.id);
      expect((await store.getJob({ id: first.id }))!.runAt.getTime()).to.equal(clock.now() + 5_000);
      await clock.advance(4_999);
      expect(await store.claimBatch({ queue: Report.name, workerId: "w", limit: 5, leaseMs: 1_000 })).to.deep.equal([]);
    });

    it("refuses replace in a batch, which always keeps the holders", async () => {
      const error = await rejectionOf(store.enqueueMany([job(1, { dedupeKey: "k", dedupe: "replace" })]));
      expect(error).to.be.instanceOf(ConfigError);
    });
  });

  it("starts a job at any attempt for a worker, whatever the queue's controls", async () => {
    await store.setQueueControls(Report.name, { paused: true });
    const claimed = await store.startJob({ job: job(7), workerId: "w1", leaseMs: 30_000, attempt: 4 });
    expect(claimed).to.include({ attempt: 4, maxAttempts: 5 });
    expect(await store.getJob({ id: claimed.id })).to.include({ state: "running", lockedBy: "w1", attempts: 4 });
    expect((await rejectionOf(store.startJob({ job: job(8), workerId: "w1", leaseMs: 30_000, attempt: 6 })))?.message).to.contain("attempt");
  });

  it("keeps time on the system clock unless given one", async () => {
    const before = Date.now();
    const { id } = await new InMemoryJobStore().enqueue(job(1));
    expect(id).to.equal("1");
    expect(new InMemoryJobStore().clock.now()).to.be.within(before, Date.now() + 1);
    expect(() => new InMemoryJobStore({ clock: {} as never })).to.throw(ConfigError, /clock/);
  });
});
