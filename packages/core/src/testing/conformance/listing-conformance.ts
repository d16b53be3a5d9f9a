import assert from "node:assert/strict";
import { assertFields } from "./conformance-assertions";
import { suite, testCase } from "./test-runner";
import { claimOne, newJob, type ConformanceContext } from "./conformance-harness";

/** listJobs and ping. */
export function describeListingConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("listJobs", () => {
    testCase("lists a queue's jobs newest first, at most limit, a page at a time with beforeId", async () => {
      const queue = ctx.freshQueue();
      const ids = (await ctx.store().enqueueMany([1, 2, 3, 4, 5].map((n) => newJob(queue, { n })))).map((result) => result.id);
      const newestFirst = [...ids].reverse();
      const first = await ctx.store().listJobs({ queue, limit: 2 });
      assert.deepStrictEqual(
        first.map((job) => job.id),
        newestFirst.slice(0, 2),
      );
      assertFields(first[0], { queue, state: "queued" });
      assert.deepStrictEqual(first[0]?.payload, { n: 5 });
      const second = await ctx.store().listJobs({ queue, limit: 2, beforeId: first[1]!.id });
      assert.deepStrictEqual(
        second.map((job) => job.id),
        newestFirst.slice(2, 4),
      );
      const last = await ctx.store().listJobs({ queue, limit: 2, beforeId: second[1]!.id });
      assert.deepStrictEqual(
        last.map((job) => job.id),
        newestFirst.slice(4),
      );
    });

    testCase("filters by state", async () => {
      const queue = ctx.freshQueue();
      const [cancelled, running, queued] = await ctx
        .store()
        .enqueueMany([newJob(queue, { n: 1 }), newJob(queue, { n: 2 }, { priority: 5 }), newJob(queue, { n: 3 })]);
      await ctx.store().cancelJob({ id: cancelled!.id });
      assert.equal((await claimOne(ctx.store(), queue, "w")).id, running!.id);
      const active = await ctx.store().listJobs({ queue, states: ["queued", "running"], limit: 10 });
      assert.deepStrictEqual(
        active.map((job) => [job.id, job.state]),
        [
          [queued!.id, "queued"],
          [running!.id, "running"],
        ],
      );
      const finished = await ctx.store().listJobs({ queue, states: ["cancelled", "dead"], limit: 10 });
      assert.deepStrictEqual(
        finished.map((job) => job.id),
        [cancelled!.id],
      );
    });

    testCase("lists every queue without a queue, newest first", async () => {
      const [older, newer] = [ctx.freshQueue(), ctx.freshQueue()];
      const a = await ctx.store().enqueue(newJob(older, {}));
      const b = await ctx.store().enqueue(newJob(newer, {}));
      const page = await ctx.store().listJobs({ limit: 2, beforeId: String(BigInt(b.id) + 1n) });
      assert.deepStrictEqual(
        page.map((job) => job.id),
        [b.id, a.id],
      );
      const ids = (await ctx.store().listJobs({ limit: 50 })).map((job) => BigInt(job.id));
      assert.deepStrictEqual(
        ids,
        [...ids].sort((x, y) => (x > y ? -1 : x < y ? 1 : 0)),
      );
    });
  });

  suite("ping", () => {
    testCase("resolves when the storage is reachable", async () => {
      await ctx.store().ping();
    });
  });
}
