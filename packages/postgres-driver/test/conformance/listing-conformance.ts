import { expect } from "chai";
import { claimOne, newJob, type ConformanceContext } from "./conformance-harness";

/** listJobs and ping. */
export function describeListingConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  describe("listJobs", () => {
    it("lists a queue's jobs newest first, at most limit, a page at a time with beforeId", async () => {
      const queue = ctx.freshQueue();
      const ids = (await ctx.store().enqueueMany([1, 2, 3, 4, 5].map((n) => newJob(queue, { n })))).map((result) => result.id);
      const newestFirst = [...ids].reverse();
      const first = await ctx.store().listJobs({ queue, limit: 2 });
      expect(first.map((job) => job.id)).to.deep.equal(newestFirst.slice(0, 2));
      expect(first[0]).to.include({ queue, state: "queued" });
      expect(first[0]?.payload).to.deep.equal({ n: 5 });
      const second = await ctx.store().listJobs({ queue, limit: 2, beforeId: first[1]!.id });
      expect(second.map((job) => job.id)).to.deep.equal(newestFirst.slice(2, 4));
      const last = await ctx.store().listJobs({ queue, limit: 2, beforeId: second[1]!.id });
      expect(last.map((job) => job.id)).to.deep.equal(newestFirst.slice(4));
    });

    it("filters by state", async () => {
      const queue = ctx.freshQueue();
      const [cancelled, running, queued] = await ctx.store().enqueueMany([
        newJob(queue, { n: 1 }),
        newJob(queue, { n: 2 }, { priority: 5 }),
        newJob(queue, { n: 3 }),
      ]);
      await ctx.store().cancelJob({ id: cancelled!.id });
      expect((await claimOne(ctx.store(), queue, "w")).id).to.equal(running!.id);
      const active = await ctx.store().listJobs({ queue, states: ["queued", "running"], limit: 10 });
      expect(active.map((job) => [job.id, job.state])).to.deep.equal([
        [queued!.id, "queued"],
        [running!.id, "running"],
      ]);
      const finished = await ctx.store().listJobs({ queue, states: ["cancelled", "dead"], limit: 10 });
      expect(finished.map((job) => job.id)).to.deep.equal([cancelled!.id]);
    });

    it("lists every queue without a queue, newest first", async () => {
      const [older, newer] = [ctx.freshQueue(), ctx.freshQueue()];
      const a = await ctx.store().enqueue(newJob(older, {}));
      const b = await ctx.store().enqueue(newJob(newer, {}));
      const page = await ctx.store().listJobs({ limit: 2, beforeId: String(BigInt(b.id) + 1n) });
      expect(page.map((job) => job.id)).to.deep.equal([b.id, a.id]);
      const ids = (await ctx.store().listJobs({ limit: 50 })).map((job) => BigInt(job.id));
      expect(ids).to.deep.equal([...ids].sort((x, y) => (x > y ? -1 : x < y ? 1 : 0)));
    });
  });

  describe("ping", () => {
    it("resolves when the storage is reachable", async () => {
      await ctx.store().ping();
    });
  });
}
