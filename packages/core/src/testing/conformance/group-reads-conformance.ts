import assert from "node:assert/strict";
import { suite, testCase } from "./test-runner";
import { newJob, type ConformanceContext } from "./conformance-harness";

/** listJobs by group or serial key, and listGroups. */
export function describeGroupReadsConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("group reads", () => {
    testCase("lists the jobs of one group or one serial line, newest first, finished ones too", async () => {
      const queue = ctx.freshQueue();
      const [acme1, , acme2, line] = await ctx
        .store()
        .enqueueMany([
          newJob(queue, { n: 1 }, { groupKey: "acme" }),
          newJob(queue, { n: 2 }, { groupKey: "beta" }),
          newJob(queue, { n: 3 }, { groupKey: "acme" }),
          newJob(queue, { n: 4 }, { groupKey: "doc-1", serial: "hold" }),
          newJob(queue, { n: 5 }),
        ]);
      await ctx.store().cancelJob({ id: acme1!.id });
      const ids = async (filter: { group?: string; serialKey?: string }) => (await ctx.store().listJobs({ queue, limit: 10, ...filter })).map((job) => job.id);
      assert.deepStrictEqual(await ids({ group: "acme" }), [acme2!.id, acme1!.id]);
      assert.deepStrictEqual(await ids({ serialKey: "doc-1" }), [line!.id]);
      assert.deepStrictEqual(await ids({ group: "doc-1" }), [], "a serial key is not a group");
      assert.deepStrictEqual(await ids({ serialKey: "acme" }), [], "a group is not a serial key");
      assert.deepStrictEqual(
        (await ctx.store().listJobs({ queue, limit: 10, group: "acme", states: ["cancelled"] })).map((job) => job.id),
        [acme1!.id],
      );
      const [other] = await ctx.store().enqueueMany([newJob(ctx.freshQueue(), { n: 6 }, { groupKey: "acme" })]);
      assert.ok(!(await ids({ group: "acme" })).includes(other!.id), "only the queue asked for");
    });

    testCase("lists a queue's busiest groups: most running, then most waiting, then by key", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueueMany([1, 2, 3].map((n) => newJob(queue, { n }, { groupKey: "acme" })));
      const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 2, leaseMs: 60_000 });
      assert.equal(claimed.length, 2);
      await ctx
        .store()
        .enqueueMany([
          newJob(queue, { n: 4 }, { groupKey: "beta" }),
          newJob(queue, { n: 5 }, { groupKey: "beta" }),
          newJob(queue, { n: 6 }, { groupKey: "doc-1", serial: "hold" }),
          newJob(queue, { n: 7 }),
        ]);
      const other = ctx.freshQueue();
      await ctx.store().enqueueMany([newJob(other, { n: 8 }, { groupKey: "zeta" })]);
      const groups = await ctx.store().listGroups({ queues: [queue], limit: 10 });
      assert.deepStrictEqual(
        groups.map((group) => ({ ...group })),
        [
          { queue, key: "acme", serial: false, running: 2, waiting: 1, heldBy: null },
          { queue, key: "beta", serial: false, running: 0, waiting: 2, heldBy: null },
          { queue, key: "doc-1", serial: true, running: 0, waiting: 1, heldBy: null },
        ],
      );
      assert.deepStrictEqual(
        (await ctx.store().listGroups({ queues: [queue], limit: 2 })).map((group) => group.key),
        ["acme", "beta"],
      );
      assert.deepStrictEqual(
        (await ctx.store().listGroups({ queues: [queue, other], limit: 1, runningOnly: true })).map((group) => ({ ...group })),
        [{ queue, key: "acme", serial: false, running: 2, waiting: null, heldBy: null }],
      );
      const both = await ctx.store().listGroups({ queues: [other, queue], limit: 1 });
      assert.deepStrictEqual(
        both.map((group) => [group.queue, group.key]),
        [queue, other].sort().map((name) => [name, name === queue ? "acme" : "zeta"]),
      );
    });
  });
}
