import assert from "node:assert/strict";
import { ErrorCode } from "../../errors/error-codes";
import { hasErrorCode } from "../../errors/stint-error";
import type { ClaimedJob } from "../../job/job-record";
import type { NewJob } from "../../store/job-store";
import { assertFields } from "./conformance-assertions";
import { newJob, type ConformanceContext } from "./conformance-harness";
import { runRandomGroupScenario } from "./groups-conformance-steps";
import { suite, testCase } from "./test-runner";

/** Groups (turns, shares, the per-group cap) and serial lines (one at a time, in order, held by a dead job). */
export function describeGroupsConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  const grouped = (queue: string, group: string, count: number, extra: Partial<NewJob> = {}) =>
    ctx.store().enqueueMany(Array.from({ length: count }, (_, n) => newJob(queue, { group, n }, { groupKey: group, ...extra })));
  const line = (queue: string, key: string, count: number, serial: "hold" | "release" = "hold", extra: (n: number) => Partial<NewJob> = () => ({})) =>
    ctx.store().enqueueMany(Array.from({ length: count }, (_, n) => newJob(queue, { n }, { groupKey: key, serial, ...extra(n) })));
  const claim = (queue: string, limit: number, workerId = "w1") => ctx.store().claimBatch({ queue, workerId, limit, leaseMs: 60_000 });
  const complete = (jobs: readonly ClaimedJob[], workerId = "w1") =>
    ctx.store().completeJobs({ workerId, jobs: jobs.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: null, durationMs: 1 })) });
  const kill = (job: ClaimedJob, workerId = "w1") =>
    ctx.store().markJobsDead({ workerId, jobs: [{ id: job.id, attempt: job.attempt, failure: { message: "Error: gone", code: null } }] });
  const groupOf = (job: ClaimedJob) => (job.payload as { group?: string }).group ?? "";
  const numberOf = (job: ClaimedJob | undefined) => (job?.payload as { n?: number } | undefined)?.n;
  const countsOf = (jobs: readonly ClaimedJob[]) =>
    jobs.reduce<Record<string, number>>((all, job) => ({ ...all, [groupOf(job)]: (all[groupOf(job)] ?? 0) + 1 }), {});
  const waiting = async (queue: string) => {
    const [counts] = await ctx.store().countByQueue({ queues: [queue] });
    return (counts?.counts.queued ?? 0) + (counts?.counts.failed ?? 0);
  };

  suite("groups", () => {
    testCase("serves a group enqueued behind another's backlog in the very first claim", async () => {
      const queue = ctx.freshQueue();
      await grouped(queue, "a", 200);
      await grouped(queue, "b", 3);
      const jobs = await claim(queue, 10);
      assert.deepStrictEqual(countsOf(jobs), { a: 7, b: 3 });
      assert.deepStrictEqual(jobs.filter((job) => groupOf(job) === "b").map(numberOf), [0, 1, 2], "within a group, claim order");
    });

    testCase("shares a claim evenly among groups with due jobs, and goes round them in key order from where the last claim stopped", async () => {
      const queue = ctx.freshQueue();
      for (const group of ["a", "b", "c"]) await grouped(queue, group, 20);
      assert.deepStrictEqual(countsOf(await claim(queue, 9)), { a: 3, b: 3, c: 3 });
      // The store's place in the queue is after c: round again from the start ("", with nothing due, is passed over).
      assert.deepStrictEqual(countsOf(await claim(queue, 2)), { a: 1, b: 1 });
      assert.deepStrictEqual(countsOf(await claim(queue, 2)), { a: 1, c: 1 });
      assert.deepStrictEqual(countsOf(await claim(queue, 1)), { b: 1 });
    });

    testCase("gives a lone group the whole claim, and the jobs without a group a turn of their own beside it", async () => {
      const queue = ctx.freshQueue();
      await grouped(queue, "a", 30);
      assert.equal((await claim(queue, 10)).length, 10);
      await ctx.store().enqueueMany([newJob(queue, { n: 1 }), newJob(queue, { n: 2 })]);
      const next = await claim(queue, 10);
      assert.deepStrictEqual(countsOf(next), { "": 2, a: 8 });
    });

    testCase("never runs more than maxRunningPerGroup of a group, across concurrent claimers, and starts the next as one finishes", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().setQueueControls(queue, { maxRunningPerGroup: 2 });
      await grouped(queue, "a", 20);
      await grouped(queue, "b", 20);
      const batches = await Promise.all(["w1", "w2", "w3", "w4"].map((worker) => claim(queue, 10, worker)));
      assert.deepStrictEqual(countsOf(batches.flat()), { a: 2, b: 2 });
      assert.equal((await claim(queue, 10, "w5")).length, 0, "both groups are at their cap");
      const owner = batches.findIndex((batch) => batch.some((job) => groupOf(job) === "a"));
      await complete(batches[owner]!.filter((job) => groupOf(job) === "a").slice(0, 1), `w${owner + 1}`);
      assert.deepStrictEqual(countsOf(await claim(queue, 10, "w5")), { a: 1 });
    });

    testCase("claims nothing, and holds nothing back, from a grouped queue without due jobs", async () => {
      const queue = ctx.freshQueue();
      await grouped(queue, "a", 1);
      await complete(await claim(queue, 10));
      const empty = await claim(queue, 10);
      assert.equal(empty.length, 0);
      assert.equal(empty.hold, undefined, "a worker draining the queue must be able to see it is empty");
    });

    testCase("keeps a job's group and serial key in its record, through its success", async () => {
      const queue = ctx.freshQueue();
      const [{ id: groupId }, { id: lineId }] = [
        await ctx.store().enqueue(newJob(queue, { n: 0 }, { groupKey: "acme" })),
        await ctx.store().enqueue(newJob(queue, { n: 1 }, { groupKey: "doc-1", serial: "release" })),
      ];
      assertFields(await ctx.store().getJob({ id: groupId }), { group: "acme", serialKey: null });
      assertFields(await ctx.store().getJob({ id: lineId }), { group: null, serialKey: "doc-1" });
      await complete(await claim(queue, 10));
      assertFields(await ctx.store().getJob({ id: groupId }), { state: "succeeded", group: "acme", serialKey: null });
      assertFields(await ctx.store().getJob({ id: lineId }), { state: "succeeded", group: null, serialKey: "doc-1" });
    });

    testCase("refuses a key used as a group and as a serial key in one queue, writing nothing", async () => {
      const queue = ctx.freshQueue();
      await grouped(queue, "acme", 1);
      const refused = await ctx
        .store()
        .enqueue(newJob(queue, { n: 2 }, { groupKey: "acme", serial: "hold" }))
        .then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
      assert.ok(hasErrorCode(refused, ErrorCode.Config), `a ConfigError, got ${String(refused)}`);
      assertFields(refused, { option: "serialKey" });
      assert.match((refused as Error).message, new RegExp(`key 'acme' of queue '${queue}' is a group; a job cannot use it as a serial key`));
      assert.equal(await waiting(queue), 1);
      const other = ctx.freshQueue();
      const batch = [newJob(other, { n: 0 }, { groupKey: "k", serial: "hold" }), newJob(other, { n: 1 }, { groupKey: "k" })];
      await assert.rejects(ctx.store().enqueueMany(batch), (thrown: unknown) => hasErrorCode(thrown, ErrorCode.Config));
      assert.equal(await waiting(other), 0, "nothing of the refused batch was written");
    });

    testCase("keeps every group's jobs within the cap and runs every job exactly once, for a seeded run of random steps", async () => {
      await runRandomGroupScenario(ctx, 7);
    });
  });

  suite("serial lines", () => {
    testCase("runs a line's jobs one at a time, in enqueue order, whatever their priority", async () => {
      const queue = ctx.freshQueue();
      await line(queue, "acct-1", 4, "hold", (n) => ({ priority: n }));
      const order: (number | undefined)[] = [];
      for (let turn = 0; turn < 4; turn += 1) {
        const jobs = await claim(queue, 10);
        assert.equal(jobs.length, 1, `turn ${turn}`);
        assert.equal((await claim(queue, 10, "w2")).length, 0, "nothing else of the line while one runs");
        order.push(numberOf(jobs[0]));
        await complete(jobs);
      }
      assert.deepStrictEqual(order, [0, 1, 2, 3]);
    });

    testCase("holds a line while its head waits for a retry", async () => {
      const queue = ctx.freshQueue();
      await line(queue, "acct-1", 3);
      const [head] = await claim(queue, 10);
      await ctx.store().scheduleRetries({
        workerId: "w1",
        jobs: [{ id: head!.id, attempt: head!.attempt, delayMs: 300, failure: { message: "Error: down", code: null }, spendAttempt: true }],
      });
      assert.equal((await claim(queue, 10)).length, 0, "the head waits for its retry: the line holds");
      await ctx.harness().waitUntilPast(new Date(ctx.now() + 300));
      const [again] = await claim(queue, 10);
      assert.equal(again?.id, head!.id);
    });

    testCase("holds a line whose job died until that job is retried", async () => {
      const queue = ctx.freshQueue();
      await line(queue, "acct-1", 3);
      const [head] = await claim(queue, 10);
      await kill(head!);
      assert.equal((await claim(queue, 10)).length, 0, "a dead job holds its line");
      assert.equal(await ctx.store().retryJob({ id: head!.id }), true);
      const [retried] = await claim(queue, 10);
      assert.equal(retried?.id, head!.id, "the retried job runs first");
      await complete([retried]);
      assert.equal(numberOf((await claim(queue, 10))[0]), 1);
    });

    testCase("brings a held line back with retryDeadJobs as with retryJob", async () => {
      const queue = ctx.freshQueue();
      await line(queue, "acct-1", 2);
      const [head] = await claim(queue, 10);
      await kill(head!);
      assert.equal(await ctx.store().retryDeadJobs({ queue, limit: 10 }), 1);
      assert.equal((await claim(queue, 10))[0]?.id, head!.id);
    });

    testCase("lets an operator release a held line: the next job runs and the dead one stays dead", async () => {
      const queue = ctx.freshQueue();
      await line(queue, "acct-1", 2);
      const [head] = await claim(queue, 10);
      await kill(head!);
      assert.equal(await ctx.store().releaseLine({ queue, key: "acct-1" }), true);
      assert.equal(await ctx.store().releaseLine({ queue, key: "acct-1" }), false, "released once");
      assert.equal(numberOf((await claim(queue, 10))[0]), 1);
      assertFields(await ctx.store().getJob({ id: head!.id }), { state: "dead" });
    });

    testCase("lets the next job of a line that releases on death run once the head dies", async () => {
      const queue = ctx.freshQueue();
      await line(queue, "doc-9", 2, "release");
      const [head] = await claim(queue, 10);
      await kill(head!);
      assert.equal(numberOf((await claim(queue, 10))[0]), 1);
    });

    testCase("does not hold a line for a cancelled or an expired job", async () => {
      const queue = ctx.freshQueue();
      await line(queue, "acct-1", 3, "hold", (n) => (n === 1 ? { expireInMs: 200 } : {}));
      const [head] = await claim(queue, 10);
      assert.equal(await ctx.store().cancelJob({ id: head!.id }), true);
      await ctx.harness().waitUntilPast(new Date(ctx.now() + 200));
      assert.equal(await ctx.store().cancelExpiredJobs({ queues: [queue], limit: 10 }), 1);
      assert.equal(numberOf((await claim(queue, 10))[0]), 2);
    });

    testCase("runs different lines of a queue side by side, one job of each", async () => {
      const queue = ctx.freshQueue();
      await line(queue, "x", 3);
      await line(queue, "y", 3);
      const jobs = await claim(queue, 10);
      assert.equal(jobs.length, 2);
      assert.deepStrictEqual(jobs.map(numberOf), [0, 0]);
    });
  });
}
