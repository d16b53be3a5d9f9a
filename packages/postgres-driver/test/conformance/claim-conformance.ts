import { ErrorCode } from "@stint/core";
import { expect } from "chai";
import { claimAndAbandon, newJob, waitForLeaseExpiry, type ConformanceContext } from "./conformance-harness";

/** claimBatch: order, limits, exclusivity and reclaiming expired leases. */
export function describeClaimConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  describe("claimBatch", () => {
    it("claims by priority (highest first), then run_at, then id, and never more than the limit", async () => {
      const queue = ctx.freshQueue();
      const ago = (seconds: number) => new Date(Date.now() - seconds * 1_000);
      const ids: Record<string, string> = {};
      const add = async (name: string, priority: number, runAt: Date) => {
        ids[name] = (await ctx.store().enqueue(newJob(queue, { name }, { priority, runAt }))).id;
      };
      await add("old-low", 0, ago(60));
      await add("new-high", 5, ago(10));
      await add("old-high", 5, ago(30));
      await add("old-low-later-id", 0, ago(60));
      await add("negative", -3, ago(120));
      await add("future-high", 9, new Date(Date.now() + 3_600_000));

      const first = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      expect(first.map((job) => (job.payload as { name: string }).name)).to.deep.equal(["old-high", "new-high", "old-low"]);
      const rest = await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000 });
      expect(rest.map((job) => (job.payload as { name: string }).name)).to.deep.equal(["old-low-later-id", "negative"]);
      expect(await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000 })).to.deep.equal([]);
      expect((await ctx.store().getJob({ id: ids["future-high"] as string }))?.state).to.equal("queued");
    });

    it("returns at most limit jobs when more are due", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany(Array.from({ length: 20 }, (_, n) => newJob(queue, { n })));
      expect(await ctx.store().claimBatch({ queue, workerId: "w", limit: 7, leaseMs: 60_000 })).to.have.length(7);
      expect(await ctx.store().claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 })).to.have.length(1);
    });

    it("sets the claimed job running, owned by the worker, and counts the attempt", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, { a: 1 }, { maxAttempts: 4, priority: 2, timeoutMs: 500 }));
      const [claimed] = await ctx.store().claimBatch({ queue, workerId: "worker-1", limit: 5, leaseMs: 30_000 });
      expect(claimed).to.include({ id, queue, attempt: 1, maxAttempts: 4, priority: 2, timeoutMs: 500 });
      expect(claimed?.payload).to.deep.equal({ a: 1 });
      const job = await ctx.store().getJob({ id });
      expect(job).to.include({ state: "running", lockedBy: "worker-1", attempts: 1 });
      const leaseMs = job!.lockedUntil!.getTime() - job!.startedAt!.getTime();
      expect(leaseMs).to.be.within(29_000, 30_001);
    });

    it("leaves jobs of other queues and jobs not yet due alone", async () => {
      const queue = ctx.freshQueue();
      const other = ctx.freshQueue();
      await ctx.store().enqueue(newJob(other, {}));
      await ctx.store().enqueue(newJob(queue, {}, { delayMs: 60_000 }));
      expect(await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000 })).to.deep.equal([]);
    });

    it("gives every job to exactly one of 8 racing claimers", async function () {
      this.timeout(60_000);
      const queue = ctx.freshQueue();
      const enqueued = await ctx.store().enqueueMany(Array.from({ length: 500 }, (_, n) => newJob(queue, { n })));
      const claimer = async (workerId: string): Promise<string[]> => {
        const mine: string[] = [];
        for (;;) {
          const batch = await ctx.store().claimBatch({ queue, workerId, limit: 7, leaseMs: 60_000 });
          if (batch.length === 0) return mine;
          expect(batch.length).to.be.at.most(7);
          mine.push(...batch.map((job) => job.id));
        }
      };
      const perClaimer = await Promise.all(Array.from({ length: 8 }, (_, n) => claimer(`racer-${n}`)));
      const all = perClaimer.flat();
      expect(all).to.have.length(500);
      expect(new Set(all)).to.deep.equal(new Set(enqueued.map((result) => result.id)));
      expect(await ctx.store().claimBatch({ queue, workerId: "late", limit: 10, leaseMs: 60_000 })).to.deep.equal([]);
    });

    it("reclaims a job whose lease expired, as the next attempt", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 3 }));
      const lost = await claimAndAbandon(ctx.harness(), queue, "stalled");
      expect(lost.attempt).to.equal(1);
      const [again] = await ctx.store().claimBatch({ queue, workerId: "rescuer", limit: 5, leaseMs: 60_000 });
      expect(again).to.include({ id, attempt: 2 });
      expect(await ctx.store().getJob({ id })).to.include({ state: "running", lockedBy: "rescuer", attempts: 2 });
    });

    it("with takeOverExpired: false, claims due jobs and leaves expired ones for a later claim", async () => {
      const queue = ctx.freshQueue();
      const { id: stalled } = await ctx.store().enqueue(newJob(queue, { n: 1 }, { maxAttempts: 3 }));
      await claimAndAbandon(ctx.harness(), queue, "stalled");
      const { id: due } = await ctx.store().enqueue(newJob(queue, { n: 2 }));
      const first = await ctx.store().claimBatch({ queue, workerId: "w", limit: 5, leaseMs: 60_000, takeOverExpired: false });
      expect(first.map((job) => job.id)).to.deep.equal([due]);
      expect(await ctx.store().getJob({ id: stalled })).to.include({ state: "running", lockedBy: "stalled", attempts: 1 });
      const second = await ctx.store().claimBatch({ queue, workerId: "w", limit: 5, leaseMs: 60_000, takeOverExpired: true });
      expect(second.map((job) => [job.id, job.attempt])).to.deep.equal([[stalled, 2]]);
    });

    it("does not claim an expired job with no attempts left; the rescue marks it dead", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { maxAttempts: 1 }));
      await claimAndAbandon(ctx.harness(), queue, "stalled");
      expect(await ctx.store().claimBatch({ queue, workerId: "w", limit: 5, leaseMs: 60_000 })).to.deep.equal([]);
      expect(await ctx.store().rescueExpiredLeases({ queues: [queue], limit: 10 })).to.deep.equal({ retried: 0, dead: 1 });
      const job = await ctx.store().getJob({ id });
      expect(job).to.include({ state: "dead", errorCode: ErrorCode.WorkerDied, lockedUntil: null });
      expect(job?.lastError).to.match(/attempt 1\b/);
      expect(job?.finishedAt).to.be.instanceOf(Date);
    });

    it("fills a batch with expired jobs after the due ones, up to the limit", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany([newJob(queue, { n: 1 }), newJob(queue, { n: 2 })]);
      const [first] = await ctx.store().claimBatch({ queue, workerId: "stalled", limit: 1, leaseMs: 1 });
      const [second] = await ctx.store().claimBatch({ queue, workerId: "stalled", limit: 1, leaseMs: 1 });
      await waitForLeaseExpiry(ctx.harness(), [first!.id, second!.id]);
      await ctx.store().enqueueMany([newJob(queue, { n: 3 }), newJob(queue, { n: 4 })]);
      const batch = await ctx.store().claimBatch({ queue, workerId: "w", limit: 3, leaseMs: 60_000 });
      expect(batch).to.have.length(3);
      expect(batch.filter((job) => job.attempt === 1).map((job) => (job.payload as { n: number }).n)).to.have.members([3, 4]);
      expect(batch.filter((job) => job.attempt === 2)).to.have.length(1);
    });

    it("with maxTimeoutMs, leaves due and expired jobs whose timeout is longer", async () => {
      const queue = ctx.freshQueue();
      const [none, short, long] = await ctx.store().enqueueMany([
        newJob(queue, { n: "none" }, { priority: 3 }),
        newJob(queue, { n: "short" }, { priority: 2, timeoutMs: 1_000 }),
        newJob(queue, { n: "long" }, { priority: 1, timeoutMs: 60_000 }),
      ]);
      const fitting = await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000, maxTimeoutMs: 1_000 });
      expect(fitting.map((job) => job.id)).to.deep.equal([none!.id, short!.id]);
      expect(await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000, maxTimeoutMs: 59_999 })).to.deep.equal([]);

      const [abandoned] = await ctx.store().claimBatch({ queue, workerId: "stalled", limit: 1, leaseMs: 1 });
      expect(abandoned?.id).to.equal(long!.id);
      await waitForLeaseExpiry(ctx.harness(), [long!.id]);
      expect(await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000, maxTimeoutMs: 1_000 })).to.deep.equal([]);
      const [reclaimed] = await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000, maxTimeoutMs: 60_000 });
      expect(reclaimed).to.include({ id: long!.id, attempt: 2 });
    });
  });
}
