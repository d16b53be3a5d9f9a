import { expect } from "chai";
import { claimOne, newJob, type ConformanceContext } from "./conformance-harness";

/** Enqueue, enqueueMany, dedupe keys and transactional enqueue. */
export function describeEnqueueConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  describe("enqueue", () => {
    it("stores a queued job with its options and reads it back", async () => {
      const queue = ctx.freshQueue();
      const { id, duplicate } = await ctx
        .store()
        .enqueue(newJob(queue, { invoiceId: 812 }, { priority: 7, maxAttempts: 5, timeoutMs: 3_000, dedupeKey: "invoice:812" }));
      expect(duplicate).to.equal(false);
      expect(id).to.match(/^[0-9]+$/);
      const job = await ctx.store().getJob({ id });
      expect(job).to.include({
        id,
        queue,
        state: "queued",
        priority: 7,
        attempts: 0,
        maxAttempts: 5,
        timeoutMs: 3_000,
        dedupeKey: "invoice:812",
        lockedBy: null,
        lockedUntil: null,
        lastError: null,
        errorCode: null,
        result: null,
        startedAt: null,
        finishedAt: null,
        durationMs: null,
      });
      expect(job?.payload).to.deep.equal({ invoiceId: 812 });
      expect(job?.createdAt).to.be.instanceOf(Date);
    });

    it("keeps a JSON array payload an array", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, [1, "two", { three: [3] }]));
      expect((await ctx.store().getJob({ id }))?.payload).to.deep.equal([1, "two", { three: [3] }]);
    });

    it("adds delayMs to runAt, or to the database clock when runAt is null", async () => {
      const queue = ctx.freshQueue();
      const at = new Date("2031-02-03T04:05:06.000Z");
      const scheduled = await ctx.store().enqueue(newJob(queue, {}, { runAt: at, delayMs: 1_500 }));
      expect((await ctx.store().getJob({ id: scheduled.id }))?.runAt.toISOString()).to.equal("2031-02-03T04:05:07.500Z");
      const delayed = await ctx.store().enqueue(newJob(queue, {}, { delayMs: 60_000 }));
      const job = await ctx.store().getJob({ id: delayed.id });
      expect(job!.runAt.getTime() - job!.createdAt.getTime()).to.equal(60_000);
    });

    it("returns the active job that holds the dedupe key instead of inserting another", async () => {
      const queue = ctx.freshQueue();
      const first = await ctx.store().enqueue(newJob(queue, { n: 1 }, { dedupeKey: "k" }));
      const second = await ctx.store().enqueue(newJob(queue, { n: 2 }, { dedupeKey: "k" }));
      expect(second).to.deep.equal({ id: first.id, duplicate: true });
      const other = await ctx.store().enqueue(newJob(ctx.freshQueue(), { n: 3 }, { dedupeKey: "k" }));
      expect(other.duplicate, "the same key in another queue is another job").to.equal(false);
    });

    it("gives 16 concurrent enqueuers of one dedupe key the same single job", async () => {
      for (let round = 0; round < 5; round += 1) {
        const queue = ctx.freshQueue();
        const results = await Promise.all(
          Array.from({ length: 16 }, (_, n) => ctx.store().enqueue(newJob(queue, { n }, { dedupeKey: "race" }))),
        );
        expect(new Set(results.map((result) => result.id)).size).to.equal(1);
        expect(results.filter((result) => !result.duplicate)).to.have.length(1);
        const [counts] = await ctx.store().countByQueue({ queues: [queue] });
        expect(counts?.counts.queued).to.equal(1);
      }
    });

    for (const ending of ["succeeded", "dead", "cancelled"] as const) {
      it(`frees the dedupe key once the job is ${ending}`, async () => {
        const queue = ctx.freshQueue();
        const first = await ctx.store().enqueue(newJob(queue, {}, { dedupeKey: "once" }));
        const claimed = await claimOne(ctx.store(), queue, "w1");
        if (ending === "succeeded") {
          await ctx.store().completeJobs({ workerId: "w1", jobs: [{ ...claimed, resultJson: null, durationMs: 1 }] });
        } else if (ending === "dead") {
          await ctx.store().markJobsDead({ workerId: "w1", jobs: [{ ...claimed, failure: { message: "gave up", code: null } }] });
        } else {
          await ctx.store().cancelJob({ id: claimed.id });
        }
        const again = await ctx.store().enqueue(newJob(queue, {}, { dedupeKey: "once" }));
        expect(again.duplicate).to.equal(false);
        expect(again.id).to.not.equal(first.id);
      });
    }
  });

  describe("enqueueMany", () => {
    it("inserts 10,000 jobs in one call with results in input order", async function () {
      this.timeout(120_000);
      const queue = ctx.freshQueue();
      const jobs = Array.from({ length: 10_000 }, (_, n) => newJob(queue, { n, text: `job "${n}" \\ {}` }));
      const results = await ctx.store().enqueueMany(jobs);
      expect(results).to.have.length(10_000);
      expect(results.every((result) => !result.duplicate)).to.equal(true);
      const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 10_000, leaseMs: 60_000 });
      const payloadById = new Map(claimed.map((job) => [job.id, job.payload]));
      expect(payloadById.size).to.equal(10_000);
      results.forEach((result, n) => {
        expect(payloadById.get(result.id), `result ${n}`).to.deep.equal({ n, text: `job "${n}" \\ {}` });
      });
    });

    it("claims the jobs of one batch in the order they were given", async () => {
      const queue = ctx.freshQueue();
      const results = await ctx.store().enqueueMany(Array.from({ length: 50 }, (_, n) => newJob(queue, { n })));
      const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 50, leaseMs: 60_000 });
      expect(claimed.map((job) => job.id)).to.deep.equal(results.map((result) => result.id));
      expect(claimed.map((job) => (job.payload as { n: number }).n)).to.deep.equal(Array.from({ length: 50 }, (_, n) => n));
    });

    it("marks a later item with an earlier item's dedupe key, or an active job's, as a duplicate", async () => {
      const queue = ctx.freshQueue();
      const existing = await ctx.store().enqueue(newJob(queue, { n: 0 }, { dedupeKey: "held" }));
      const results = await ctx.store().enqueueMany([
        newJob(queue, { n: 1 }, { dedupeKey: "a" }),
        newJob(queue, { n: 2 }),
        newJob(queue, { n: 3 }, { dedupeKey: "held" }),
        newJob(queue, { n: 4 }, { dedupeKey: "a" }),
        newJob(queue, { n: 5 }, { dedupeKey: "b" }),
        newJob(queue, { n: 6 }),
        newJob(queue, { n: 7 }, { dedupeKey: "b" }),
      ]);
      expect(results.map((result) => result.duplicate)).to.deep.equal([false, false, true, true, false, false, true]);
      expect(results[2]?.id).to.equal(existing.id);
      expect(results[3]?.id).to.equal(results[0]?.id);
      expect(results[6]?.id).to.equal(results[4]?.id);
      expect(new Set(results.map((result) => result.id)).size).to.equal(5);
      const [counts] = await ctx.store().countByQueue({ queues: [queue] });
      expect(counts?.counts.queued).to.equal(5);
    });

    it("agrees with concurrent batches on one job per dedupe key", async () => {
      const queue = ctx.freshQueue();
      const keys = Array.from({ length: 40 }, (_, n) => `key-${n}`);
      const batches = await Promise.all(
        Array.from({ length: 6 }, (_, b) =>
          ctx.store().enqueueMany(keys.map((key, n) => newJob(queue, { b, n }, { dedupeKey: keys[(n + b * 7) % keys.length] ?? key }))),
        ),
      );
      const idByKey = new Map<string, string>();
      batches.forEach((results, b) =>
        results.forEach((result, n) => {
          const key = keys[(n + b * 7) % keys.length] as string;
          expect(idByKey.get(key) ?? result.id, key).to.equal(result.id);
          idByKey.set(key, result.id);
        }),
      );
      const [counts] = await ctx.store().countByQueue({ queues: [queue] });
      expect(counts?.counts.queued).to.equal(40);
    });

    it("returns an empty list for an empty batch", async () => {
      expect(await ctx.store().enqueueMany([])).to.deep.equal([]);
    });
  });

  describe("transactional enqueue", () => {
    it("is invisible to other connections until the transaction commits", async () => {
      const queue = ctx.freshQueue();
      const ids = await ctx.harness().withTransaction(async (transaction) => {
        const one = await ctx.store().enqueue(newJob(queue, { n: 1 }), transaction);
        const many = await ctx.store().enqueueMany([newJob(queue, { n: 2 }), newJob(queue, { n: 3 })], transaction);
        expect(await ctx.store().getJob({ id: one.id })).to.equal(undefined);
        expect(await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000 })).to.deep.equal([]);
        return [one.id, ...many.map((result) => result.id)];
      });
      for (const id of ids) expect((await ctx.store().getJob({ id }))?.state).to.equal("queued");
    });

    it("leaves no job behind when the transaction rolls back", async () => {
      const queue = ctx.freshQueue();
      let id = "";
      const failure = new Error("the caller's write failed");
      let caught: unknown;
      try {
        await ctx.harness().withTransaction(async (transaction) => {
          id = (await ctx.store().enqueue(newJob(queue, {}, { dedupeKey: "tx" }), transaction)).id;
          throw failure;
        });
      } catch (thrown) {
        caught = thrown;
      }
      expect(caught).to.equal(failure);
      expect(await ctx.store().getJob({ id })).to.equal(undefined);
      const again = await ctx.store().enqueue(newJob(queue, {}, { dedupeKey: "tx" }));
      expect(again.duplicate, "the rolled-back job held no key").to.equal(false);
    });
  });
}
