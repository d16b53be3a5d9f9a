import assert from "node:assert/strict";
import { ErrorCode } from "../../errors/error-codes";
import { suite, testCase } from "./test-runner";
import { claimOne, newJob, type ConformanceContext } from "./conformance-harness";
import { finishAs, pastDeadline } from "./enqueue-windows-steps";

/** Unique windows, start-by deadlines (expiry) and follow-up runs of `replace`. */
export function describeEnqueueWindowsConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("unique windows", () => {
    for (const ending of ["running", "succeeded", "dead", "cancelled"] as const) {
      testCase(`returns the window's first job while the window is open, ${ending} or not`, async () => {
        const queue = ctx.freshQueue();
        const first = await ctx.store().enqueue(newJob(queue, { n: 1 }, { unique: { key: "digest:7", forMs: 3_600_000 } }));
        assert.equal(first.duplicate, false);
        await finishAs(ctx.store(), queue, ending);
        const second = await ctx.store().enqueue(newJob(queue, { n: 2 }, { unique: { key: "digest:7", forMs: 3_600_000 } }));
        assert.deepStrictEqual(second, { id: first.id, duplicate: true });
        const other = await ctx.store().enqueue(newJob(queue, { n: 3 }, { unique: { key: "digest:8", forMs: 3_600_000 } }));
        assert.equal(other.duplicate, false, "another key is another window");
        const elsewhere = await ctx.store().enqueue(newJob(ctx.freshQueue(), { n: 4 }, { unique: { key: "digest:7", forMs: 3_600_000 } }));
        assert.equal(elsewhere.duplicate, false, "the same key in another queue is another window");
      });
    }

    testCase("opens a new window with a new job once the first window has closed", async () => {
      const queue = ctx.freshQueue();
      const first = await ctx.store().enqueue(newJob(queue, { n: 1 }, { unique: { key: "k", forMs: 300 } }));
      const created = (await ctx.store().getJob({ id: first.id }))!.createdAt.getTime();
      // Times read back are rounded down to the millisecond: wait one more to be past the stored microseconds.
      await ctx.harness().waitUntilPast(new Date(created + 301));
      const second = await ctx.store().enqueue(newJob(queue, { n: 2 }, { unique: { key: "k", forMs: 300 } }));
      assert.equal(second.duplicate, false);
      assert.notEqual(second.id, first.id);
      const third = await ctx.store().enqueue(newJob(queue, { n: 3 }, { unique: { key: "k", forMs: 300 } }));
      assert.deepStrictEqual(third, { id: second.id, duplicate: true });
    });

    testCase("forgets closed windows of the queues asked for, and keeps open ones and other queues'", async () => {
      const [mine, other] = [ctx.freshQueue(), ctx.freshQueue()];
      await ctx.store().enqueue(newJob(mine, { n: 1 }, { unique: { key: "short", forMs: 200 } }));
      const closingToo = await ctx.store().enqueue(newJob(other, { n: 2 }, { unique: { key: "short", forMs: 200 } }));
      const open = await ctx.store().enqueue(newJob(mine, { n: 3 }, { unique: { key: "long", forMs: 3_600_000 } }));
      // Both short windows closed: the later one opened a moment after the first, more on a busy machine.
      const created = (await ctx.store().getJob({ id: closingToo.id }))!.createdAt.getTime();
      await ctx.harness().waitUntilPast(new Date(created + 201));
      assert.equal(await ctx.store().deleteClosedWindows({ queues: [mine], limit: 100 }), 1);
      assert.equal(await ctx.store().deleteClosedWindows({ queues: [mine], limit: 100 }), 0, "nothing closed is left in the queue asked for");
      assert.equal(await ctx.store().deleteClosedWindows({ queues: [other], limit: 100 }), 1, "the other queue's closed window was kept");
      const again = await ctx.store().enqueue(newJob(mine, { n: 4 }, { unique: { key: "long", forMs: 3_600_000 } }));
      assert.deepStrictEqual(again, { id: open.id, duplicate: true }, "the open window is kept");
    });

    testCase("gives 16 concurrent enqueuers of one window the same single job", async () => {
      for (let round = 0; round < 5; round += 1) {
        const queue = ctx.freshQueue();
        const results = await Promise.all(
          Array.from({ length: 16 }, (_, n) => ctx.store().enqueue(newJob(queue, { n }, { unique: { key: "race", forMs: 60_000 } }))),
        );
        assert.equal(new Set(results.map((result) => result.id)).size, 1);
        assert.equal(results.filter((result) => !result.duplicate).length, 1);
        const [counts] = await ctx.store().countByQueue({ queues: [queue] });
        assert.equal(counts?.counts.queued, 1);
      }
    });

    testCase("opens no window when the enqueue's transaction rolls back", async () => {
      const queue = ctx.freshQueue();
      const failure = new Error("the caller's write failed");
      await assert.rejects(
        ctx.harness().withTransaction(async (transaction) => {
          await ctx.store().enqueue(newJob(queue, {}, { unique: { key: "tx", forMs: 60_000 } }), transaction);
          throw failure;
        }),
        (thrown) => thrown === failure,
      );
      const again = await ctx.store().enqueue(newJob(queue, {}, { unique: { key: "tx", forMs: 60_000 } }));
      assert.equal(again.duplicate, false);
    });
  });

  suite("start-by deadlines", () => {
    testCase("never claims a job past its start-by deadline, and cancels it as expired", async () => {
      const queue = ctx.freshQueue();
      const late = await ctx.store().enqueue(newJob(queue, { n: 1 }, { expireInMs: 200 }));
      const open = await ctx.store().enqueue(newJob(queue, { n: 2 }, { expireInMs: 3_600_000 }));
      const job = await ctx.store().getJob({ id: late.id });
      assert.equal(job!.startBy!.getTime() - job!.runAt.getTime(), 200);
      await pastDeadline(ctx, late.id);
      const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000 });
      assert.deepStrictEqual(
        claimed.map((row) => row.id),
        [open.id],
      );
      assert.equal(await ctx.store().cancelExpiredJobs({ queues: [queue], limit: 10 }), 1);
      const expired = await ctx.store().getJob({ id: late.id });
      assert.equal(expired?.state, "cancelled");
      assert.equal(expired?.errorCode, ErrorCode.Expired);
      assert.equal(expired?.startedAt, null);
      assert.match(expired?.lastError ?? "", /^Not started by /);
      assert.equal(await ctx.store().cancelExpiredJobs({ queues: [queue], limit: 10 }), 0);
    });

    testCase("counts expireInMs from the run time, and takes a startBy as it is", async () => {
      const queue = ctx.freshQueue();
      const at = new Date("2031-02-03T04:05:06.000Z");
      const delayed = await ctx.store().enqueue(newJob(queue, {}, { runAt: at, expireInMs: 60_000 }));
      assert.equal((await ctx.store().getJob({ id: delayed.id }))?.startBy?.toISOString(), "2031-02-03T04:06:06.000Z");
      const fixed = await ctx.store().enqueue(newJob(queue, {}, { startBy: at }));
      assert.equal((await ctx.store().getJob({ id: fixed.id }))?.startBy?.toISOString(), at.toISOString());
      const never = await ctx.store().enqueue(newJob(queue, {}));
      assert.equal((await ctx.store().getJob({ id: never.id }))?.startBy, null);
      assert.equal(await ctx.store().cancelExpiredJobs({ queues: [queue], limit: 10 }), 0);
    });

    testCase("does not start a retry past the deadline either", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { expireInMs: 300 }));
      const claimed = await claimOne(ctx.store(), queue, "w");
      await ctx
        .store()
        .scheduleRetries({ workerId: "w", jobs: [{ ...claimed, delayMs: 0, spendAttempt: true, failure: { message: "try again", code: null } }] });
      await pastDeadline(ctx, id);
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000 }), []);
      assert.equal((await ctx.store().cancelExpiredJobs({ limit: 10_000 })) >= 1, true);
      assert.equal((await ctx.store().getJob({ id }))?.errorCode, ErrorCode.Expired);
    });

    testCase("runs an expired job an operator retries, its deadline cleared", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, {}, { expireInMs: 1 }));
      await pastDeadline(ctx, id);
      assert.equal(await ctx.store().cancelExpiredJobs({ queues: [queue], limit: 10 }), 1);
      assert.equal(await ctx.store().retryJob({ id }), true);
      assert.deepStrictEqual([(await ctx.store().getJob({ id }))?.state, (await ctx.store().getJob({ id }))?.startBy], ["queued", null]);
      assert.equal((await claimOne(ctx.store(), queue, "w")).id, id);
    });
  });

  suite("follow-up runs", () => {
    for (const holderState of ["running", "failed"] as const) {
      testCase(`gives a ${holderState} holder of the key one follow-up job with the newest payload`, async () => {
        const queue = ctx.freshQueue();
        const first = await ctx.store().enqueue(newJob(queue, { n: 0 }, { dedupeKey: "doc:1", onDuplicate: "replace" }));
        const claimed = await claimOne(ctx.store(), queue, "w");
        if (holderState === "failed")
          await ctx
            .store()
            .scheduleRetries({ workerId: "w", jobs: [{ ...claimed, delayMs: 3_600_000, spendAttempt: true, failure: { message: "later", code: null } }] });
        const results = [];
        for (let n = 1; n <= 3; n += 1) results.push(await ctx.store().enqueue(newJob(queue, { n }, { dedupeKey: "doc:1", onDuplicate: "replace" })));
        const followUp = results[0]!;
        assert.equal(followUp.duplicate, false);
        assert.notEqual(followUp.id, first.id);
        assert.deepStrictEqual(results.slice(1), [
          { id: followUp.id, duplicate: true, replaced: true },
          { id: followUp.id, duplicate: true, replaced: true },
        ]);
        const held = await ctx.store().getJob({ id: first.id });
        assert.equal(held?.state, holderState);
        assert.equal(held?.dedupeKey, null, "the holder gave its key up");
        const next = await ctx.store().getJob({ id: followUp.id });
        assert.deepStrictEqual([next?.state, next?.dedupeKey, next?.payload], ["queued", "doc:1", { n: 3 }]);
      });
    }

    testCase("claims a follow-up only once the job it follows has finished, and chains a follow-up of a started follow-up", async () => {
      const queue = ctx.freshQueue();
      await ctx.store().enqueue(newJob(queue, { n: 0 }, { dedupeKey: "doc:2", onDuplicate: "replace" }));
      const holder = await claimOne(ctx.store(), queue, "w");
      const followUp = await ctx.store().enqueue(newJob(queue, { n: 1 }, { dedupeKey: "doc:2", onDuplicate: "replace" }));
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w2", limit: 10, leaseMs: 60_000 }), [], "not while the holder runs");
      await ctx.store().completeJobs({ workerId: "w", jobs: [{ ...holder, resultJson: null, durationMs: 1 }] });
      assert.equal((await claimOne(ctx.store(), queue, "w2")).id, followUp.id);
      const next = await ctx.store().enqueue(newJob(queue, { n: 2 }, { dedupeKey: "doc:2", onDuplicate: "replace" }));
      assert.equal(next.duplicate, false);
      assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w3", limit: 10, leaseMs: 60_000 }), [], "not while the follow-up runs");
    });

    testCase("keeps a running holder as it is under keep", async () => {
      const queue = ctx.freshQueue();
      const first = await ctx.store().enqueue(newJob(queue, { n: 0 }, { dedupeKey: "doc:1" }));
      await claimOne(ctx.store(), queue, "w");
      assert.deepStrictEqual(await ctx.store().enqueue(newJob(queue, { n: 1 }, { dedupeKey: "doc:1" })), { id: first.id, duplicate: true });
    });

    testCase("schedules exactly one follow-up for 16 concurrent replacing enqueuers while the holder runs", async () => {
      for (let round = 0; round < 5; round += 1) {
        const queue = ctx.freshQueue();
        const first = await ctx.store().enqueue(newJob(queue, { n: -1 }, { dedupeKey: "race", onDuplicate: "replace" }));
        await claimOne(ctx.store(), queue, "w");
        const results = await Promise.all(
          Array.from({ length: 16 }, (_, n) => ctx.store().enqueue(newJob(queue, { n }, { dedupeKey: "race", onDuplicate: "replace" }))),
        );
        const ids = new Set(results.map((result) => result.id));
        assert.equal(ids.size, 1);
        assert.equal(ids.has(first.id), false);
        assert.equal(results.filter((result) => !result.duplicate).length, 1);
        const [counts] = await ctx.store().countByQueue({ queues: [queue] });
        assert.deepStrictEqual([counts?.counts.queued, counts?.counts.running], [1, 1]);
      }
    });
  });
}
