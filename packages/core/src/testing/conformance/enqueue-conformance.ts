import assert from "node:assert/strict";
import { assertFields } from "./conformance-assertions";
import { suite, testCase } from "./test-runner";
import { claimOne, newJob, type ConformanceContext } from "./conformance-harness";

/** Enqueue, enqueueMany, dedupe keys and transactional enqueue. */
export function describeEnqueueConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("enqueue", () => {
    testCase("stores a queued job with its options and reads it back", async () => {
      const queue = ctx.freshQueue();
      const { id, duplicate } = await ctx
        .store()
        .enqueue(newJob(queue, { invoiceId: 812 }, { priority: 7, maxAttempts: 5, timeoutMs: 3_000, dedupeKey: "invoice:812" }));
      assert.equal(duplicate, false);
      assert.match(id, /^[0-9]+$/);
      const job = await ctx.store().getJob({ id });
      assertFields(job, {
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
      assert.deepStrictEqual(job?.payload, { invoiceId: 812 });
      assert.ok(job?.createdAt instanceof Date);
    });

    testCase("keeps a JSON array payload an array", async () => {
      const queue = ctx.freshQueue();
      const { id } = await ctx.store().enqueue(newJob(queue, [1, "two", { three: [3] }]));
      assert.deepStrictEqual((await ctx.store().getJob({ id }))?.payload, [1, "two", { three: [3] }]);
    });

    testCase("adds delayMs to runAt, or to the database clock when runAt is null", async () => {
      const queue = ctx.freshQueue();
      const at = new Date("2031-02-03T04:05:06.000Z");
      const scheduled = await ctx.store().enqueue(newJob(queue, {}, { runAt: at, delayMs: 1_500 }));
      assert.equal((await ctx.store().getJob({ id: scheduled.id }))?.runAt.toISOString(), "2031-02-03T04:05:07.500Z");
      const delayed = await ctx.store().enqueue(newJob(queue, {}, { delayMs: 60_000 }));
      const job = await ctx.store().getJob({ id: delayed.id });
      assert.equal(job!.runAt.getTime() - job!.createdAt.getTime(), 60_000);
    });

    testCase("returns the active job that holds the dedupe key instead of inserting another", async () => {
      const queue = ctx.freshQueue();
      const first = await ctx.store().enqueue(newJob(queue, { n: 1 }, { dedupeKey: "k" }));
      const second = await ctx.store().enqueue(newJob(queue, { n: 2 }, { dedupeKey: "k" }));
      assert.deepStrictEqual(second, { id: first.id, duplicate: true });
      const other = await ctx.store().enqueue(newJob(ctx.freshQueue(), { n: 3 }, { dedupeKey: "k" }));
      assert.equal(other.duplicate, false, "the same key in another queue is another job");
    });

    testCase("gives 16 concurrent enqueuers of one dedupe key the same single job", async () => {
      for (let round = 0; round < 5; round += 1) {
        const queue = ctx.freshQueue();
        const results = await Promise.all(Array.from({ length: 16 }, (_, n) => ctx.store().enqueue(newJob(queue, { n }, { dedupeKey: "race" }))));
        assert.equal(new Set(results.map((result) => result.id)).size, 1);
        assert.equal(results.filter((result) => !result.duplicate).length, 1);
        const [counts] = await ctx.store().countByQueue({ queues: [queue] });
        assert.equal(counts?.counts.queued, 1);
      }
    });

    for (const ending of ["succeeded", "dead", "cancelled"] as const) {
      testCase(`frees the dedupe key once the job is ${ending}`, async () => {
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
        assert.equal(again.duplicate, false);
        assert.notEqual(again.id, first.id);
      });
    }
  });

  suite("enqueueMany", () => {
    testCase(
      "inserts 10,000 jobs in one call with results in input order",
      async () => {
        const queue = ctx.freshQueue();
        const jobs = Array.from({ length: 10_000 }, (_, n) => newJob(queue, { n, text: `job "${n}" \\ {}` }));
        const results = await ctx.store().enqueueMany(jobs);
        assert.equal(results.length, 10_000);
        assert.equal(
          results.every((result) => !result.duplicate),
          true,
        );
        const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 10_000, leaseMs: 60_000 });
        const payloadById = new Map(claimed.map((job) => [job.id, job.payload]));
        assert.equal(payloadById.size, 10_000);
        results.forEach((result, n) => {
          assert.deepStrictEqual(payloadById.get(result.id), { n, text: `job "${n}" \\ {}` }, `result ${n}`);
        });
      },
      120_000,
    );

    testCase("claims the jobs of one batch in the order they were given", async () => {
      const queue = ctx.freshQueue();
      const results = await ctx.store().enqueueMany(Array.from({ length: 50 }, (_, n) => newJob(queue, { n })));
      const claimed = await ctx.store().claimBatch({ queue, workerId: "w", limit: 50, leaseMs: 60_000 });
      assert.deepStrictEqual(
        claimed.map((job) => job.id),
        results.map((result) => result.id),
      );
      assert.deepStrictEqual(
        claimed.map((job) => (job.payload as { n: number }).n),
        Array.from({ length: 50 }, (_, n) => n),
      );
    });

    testCase("marks a later item with an earlier item's dedupe key, or an active job's, as a duplicate", async () => {
      const queue = ctx.freshQueue();
      const existing = await ctx.store().enqueue(newJob(queue, { n: 0 }, { dedupeKey: "held" }));
      const results = await ctx
        .store()
        .enqueueMany([
          newJob(queue, { n: 1 }, { dedupeKey: "a" }),
          newJob(queue, { n: 2 }),
          newJob(queue, { n: 3 }, { dedupeKey: "held" }),
          newJob(queue, { n: 4 }, { dedupeKey: "a" }),
          newJob(queue, { n: 5 }, { dedupeKey: "b" }),
          newJob(queue, { n: 6 }),
          newJob(queue, { n: 7 }, { dedupeKey: "b" }),
        ]);
      assert.deepStrictEqual(
        results.map((result) => result.duplicate),
        [false, false, true, true, false, false, true],
      );
      assert.equal(results[2]?.id, existing.id);
      assert.equal(results[3]?.id, results[0]?.id);
      assert.equal(results[6]?.id, results[4]?.id);
      assert.equal(new Set(results.map((result) => result.id)).size, 5);
      const [counts] = await ctx.store().countByQueue({ queues: [queue] });
      assert.equal(counts?.counts.queued, 5);
    });

    testCase("agrees with concurrent batches on one job per dedupe key", async () => {
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
          assert.equal(idByKey.get(key) ?? result.id, result.id, key);
          idByKey.set(key, result.id);
        }),
      );
      const [counts] = await ctx.store().countByQueue({ queues: [queue] });
      assert.equal(counts?.counts.queued, 40);
    });

    testCase("returns an empty list for an empty batch", async () => {
      assert.deepStrictEqual(await ctx.store().enqueueMany([]), []);
    });
  });

  suite("transactional enqueue", () => {
    testCase("is invisible to other connections until the transaction commits", async () => {
      const queue = ctx.freshQueue();
      const ids = await ctx.harness().withTransaction(async (transaction) => {
        const one = await ctx.store().enqueue(newJob(queue, { n: 1 }), transaction);
        const many = await ctx.store().enqueueMany([newJob(queue, { n: 2 }), newJob(queue, { n: 3 })], transaction);
        assert.equal(await ctx.store().getJob({ id: one.id }), undefined);
        assert.deepStrictEqual(await ctx.store().claimBatch({ queue, workerId: "w", limit: 10, leaseMs: 60_000 }), []);
        return [one.id, ...many.map((result) => result.id)];
      });
      for (const id of ids) assert.equal((await ctx.store().getJob({ id }))?.state, "queued");
    });

    testCase("leaves no job behind when the transaction rolls back", async () => {
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
      assert.equal(caught, failure);
      assert.equal(await ctx.store().getJob({ id }), undefined);
      const again = await ctx.store().enqueue(newJob(queue, {}, { dedupeKey: "tx" }));
      assert.equal(again.duplicate, false, "the rolled-back job held no key");
    });
  });
}
