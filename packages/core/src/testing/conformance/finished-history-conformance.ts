import assert from "node:assert/strict";
import { awaitJobEnd } from "../../client/await-job";
import { JobFailedError } from "../../errors/wait-errors";
import type { JobState } from "../../job/job-state";
import type { FinishedState } from "../../store/store-params";
import { assertFields, assertWithin } from "./conformance-assertions";
import { claimOne, newJob, rejectionOf, type ConformanceContext } from "./conformance-harness";
import { assertListedOnce, finishEach, finishNext, lastFinish, permanent, transient, type Ending } from "./finished-history-steps";
import { suite, testCase } from "./test-runner";

const FINISHED: FinishedState[] = ["succeeded", "dead", "cancelled"];

/**
 * How far apart the tests that date jobs keep an older and a younger group
 * of finished jobs: the cutoff between them falls in the middle, so a
 * cutoff reckoned on the test's clock a moment before the store reads its
 * own still falls between them.
 */
const GROUP_GAP_MS = 1_000;

/** A wait that answers quickly, whether or not the store hints at finishes. */
const QUICK_WAIT = { timeoutMs: 10_000, pollIntervalMs: 20 };

/**
 * The rules of finished jobs, whatever the store keeps them in: a finished
 * job stays readable (getJob, listJobs, countByQueue, listAttempts, a
 * wait) until retention removes it; retention removes only what it was
 * asked to and, with it, the attempt history; a retried job is active again
 * under its id and finishes again; no job is ever listed twice.
 */
export function describeFinishedHistoryConformance<Tx>(ctx: ConformanceContext<Tx>): void {
  suite("finished jobs stay readable", () => {
    testCase("reads a succeeded, a dead and a cancelled job with their state, result or error, attempts and finish time", async () => {
      const queue = ctx.freshQueue();
      const store = ctx.store();
      const [succeeded, dead, cancelledRunning, cancelledWaiting, waiting] = await store.enqueueMany([
        newJob(queue, { invoiceId: 812 }, { priority: 9 }),
        newJob(queue, { invoiceId: 813 }, { priority: 8, maxAttempts: 5 }),
        newJob(queue, { invoiceId: 814 }, { priority: 7 }),
        newJob(queue, { invoiceId: 815 }, { delayMs: 3_600_000 }),
        newJob(queue, { invoiceId: 816 }, { delayMs: 3_600_000 }),
      ]);
      const first = await claimOne(store, queue, "w1");
      await store.scheduleRetries({ workerId: "w1", jobs: [{ ...first, delayMs: 0, failure: transient, spendAttempt: true, durationMs: 4 }] });
      const second = await claimOne(store, queue, "w2");
      assert.equal(second.id, succeeded!.id);
      await store.completeJobs({ workerId: "w2", jobs: [{ ...second, resultJson: '{"sent":true}', durationMs: 12 }] });
      const dying = await claimOne(store, queue, "w3");
      await store.markJobsDead({ workerId: "w3", jobs: [{ ...dying, failure: permanent, durationMs: 5 }] });
      const running = await claimOne(store, queue, "w4");
      assert.equal(await store.cancelJob({ id: running.id }), true);
      assert.equal(await store.cancelJob({ id: cancelledWaiting!.id }), true);

      const read = async (id: string) => {
        const job = await store.getJob({ id });
        assert.ok(job !== undefined, `getJob finds finished job ${id}`);
        assert.ok(job.finishedAt instanceof Date, `job ${id} has a finish time`);
        assertWithin(job.finishedAt.getTime(), job.createdAt.getTime(), ctx.now() + 1);
        return job;
      };
      const succeededJob = await read(succeeded!.id);
      assertFields(succeededJob, { state: "succeeded", attempts: 2, result: { sent: true }, durationMs: 12, lockedUntil: null, lockedBy: "w2" });
      assert.deepStrictEqual(succeededJob.payload, { invoiceId: 812 });
      assertFields(await read(dead!.id), {
        state: "dead",
        attempts: 1,
        maxAttempts: 5,
        lastError: permanent.message,
        errorCode: permanent.code,
        lockedUntil: null,
      });
      assertFields(await read(cancelledRunning!.id), { state: "cancelled", attempts: 1, lockedUntil: null });
      assertFields(await read(cancelledWaiting!.id), { state: "cancelled", attempts: 0, durationMs: null });

      await assertListedOnce(store, queue, {
        [succeeded!.id]: "succeeded",
        [dead!.id]: "dead",
        [cancelledRunning!.id]: "cancelled",
        [cancelledWaiting!.id]: "cancelled",
        [waiting!.id]: "queued",
      });
      const finished = await store.listJobs({ queue, states: ["succeeded", "dead"], limit: 10 });
      assert.deepStrictEqual(
        finished.map((job) => [job.id, job.state, job.attempts]),
        [
          [dead!.id, "dead", 1],
          [succeeded!.id, "succeeded", 2],
        ],
      );
      assert.deepStrictEqual(
        (await store.listAttempts({ jobId: succeeded!.id })).map((attempt) => [attempt.attempt, attempt.outcome, attempt.workerId]),
        [
          [1, "failed", "w1"],
          [2, "succeeded", "w2"],
        ],
      );
      assertFields((await store.listAttempts({ jobId: dead!.id }))[0], { attempt: 1, outcome: "dead", workerId: "w3" });
      assertFields((await store.listAttempts({ jobId: cancelledRunning!.id }))[0], { attempt: 1, outcome: "cancelled", workerId: "w4" });
    });

    testCase("pages through active and finished jobs together, newest first, each once", async () => {
      const queue = ctx.freshQueue();
      const store = ctx.store();
      // Every other job is claimed first and finished, so finished and active ids alternate.
      const jobs = await store.enqueueMany(Array.from({ length: 8 }, (_, n) => newJob(queue, { n }, n % 2 === 0 ? { priority: 1 } : { delayMs: 3_600_000 })));
      const endings: Ending[] = ["succeed", "die", "cancel", "succeed"];
      for (const how of endings) await finishNext(store, queue, how);
      const pages: string[] = [];
      let beforeId: string | undefined;
      for (let page = 0; page < 10; page += 1) {
        const listed = await store.listJobs({ queue, limit: 3, ...(beforeId === undefined ? {} : { beforeId }) });
        pages.push(...listed.map((job) => job.id));
        if (listed.length < 3) break;
        beforeId = listed[listed.length - 1]!.id;
      }
      assert.deepStrictEqual(pages, jobs.map((job) => job.id).reverse());
      const states = (await store.listJobs({ queue, limit: 10 })).map((job) => job.state).reverse();
      assert.deepStrictEqual(states, ["succeeded", "queued", "dead", "queued", "cancelled", "queued", "succeeded", "queued"]);
    });

    testCase("resolves a wait for a job that already succeeded, and ends one for a job already dead or cancelled", async () => {
      const queue = ctx.freshQueue();
      const store = ctx.store();
      const [succeeded, dead, cancelled] = await finishEach(store, queue, ["succeed", "die", "cancel"]);
      const done = await awaitJobEnd(store, { id: succeeded!.id, queue }, QUICK_WAIT);
      assertFields(done, { id: succeeded!.id, state: "succeeded", result: { n: 1 } });
      const died = await rejectionOf(awaitJobEnd(store, { id: dead!.id }, QUICK_WAIT));
      assert.ok(died instanceof JobFailedError, `a wait for a dead job ends with JobFailedError, not ${String(died)}`);
      assertFields(died, { jobId: dead!.id, state: "dead", attempts: 1, lastErrorCode: permanent.code });
      const stopped = await rejectionOf(awaitJobEnd(store, { id: cancelled!.id }, QUICK_WAIT));
      assert.ok(stopped instanceof JobFailedError, `a wait for a cancelled job ends with JobFailedError, not ${String(stopped)}`);
      assertFields(stopped, { jobId: cancelled!.id, state: "cancelled" });
    });

    testCase("resolves a wait that began while the job ran once it succeeds", async () => {
      const queue = ctx.freshQueue();
      const store = ctx.store();
      const { id } = await store.enqueue(newJob(queue, {}));
      const job = await claimOne(store, queue, "w");
      const waiting = awaitJobEnd(store, { id, queue }, QUICK_WAIT);
      await store.completeJobs({ workerId: "w", jobs: [{ ...job, resultJson: '{"width":640}', durationMs: 1 }] });
      assertFields(await waiting, { id, state: "succeeded", result: { width: 640 } });
    });

    testCase("never lists a job twice or loses one, nor reads one as missing, while jobs finish", async () => {
      const queue = ctx.freshQueue();
      const store = ctx.store();
      const jobs = await store.enqueueMany(Array.from({ length: 60 }, (_, n) => newJob(queue, { n })));
      const ids = jobs.map((job) => job.id);
      let working = true;
      const worker = (async () => {
        try {
          for (let round = 0; round < 30; round += 1) {
            const claimed = await store.claimBatch({ queue, workerId: "w", limit: 2, leaseMs: 60_000 });
            if (claimed.length === 0) break;
            const [first, second] = claimed;
            await store.completeJobs({ workerId: "w", jobs: [{ ...first!, resultJson: null, durationMs: 1 }] });
            if (second !== undefined) await store.markJobsDead({ workerId: "w", jobs: [{ ...second, failure: permanent }] });
          }
        } finally {
          working = false;
        }
      })();
      let reads = 0;
      while (working || reads < 3) {
        const listed = (await store.listJobs({ queue, limit: 100 })).map((job) => job.id);
        assert.deepStrictEqual(listed, [...ids].reverse(), "a listing while jobs finish holds every job once");
        const id = ids[reads % ids.length]!;
        assert.notEqual(await store.getJob({ id }), undefined, `getJob finds job ${id} while jobs finish`);
        reads += 1;
      }
      await worker;
      const counted = (await store.countByQueue({ queues: [queue] }))[0]!.counts;
      assert.deepStrictEqual([counted.succeeded, counted.dead, counted.queued + counted.running], [30, 30, 0]);
    });
  });

  suite("retention of finished jobs", () => {
    testCase("removes only the given states finished before the cutoff, and keeps younger jobs, other states and active jobs", async () => {
      const queue = ctx.freshQueue();
      const store = ctx.store();
      const [oldSucceeded, oldDead, oldCancelled] = await finishEach(store, queue, ["succeed", "die", "cancel"]);
      const oldEnd = await lastFinish(store, [oldSucceeded!.id, oldDead!.id, oldCancelled!.id]);
      await ctx.harness().waitUntilPast(new Date(oldEnd + GROUP_GAP_MS));
      const [youngSucceeded, youngDead, youngCancelled] = await finishEach(store, queue, ["succeed", "die", "cancel"]);
      const [queued, running, failed] = await store.enqueueMany([
        newJob(queue, { active: "queued" }, { delayMs: 3_600_000 }),
        newJob(queue, { active: "running" }, { priority: 2 }),
        newJob(queue, { active: "failed" }, { priority: 1 }),
      ]);
      await claimOne(store, queue, "w");
      const failing = await claimOne(store, queue, "w");
      await store.scheduleRetries({ workerId: "w", jobs: [{ ...failing, delayMs: 3_600_000, failure: transient, spendAttempt: true }] });

      // The retention a store is configured with: succeeded and cancelled jobs kept a short while, dead ones longer.
      const middle = oldEnd + GROUP_GAP_MS / 2;
      const removeBefore = (states: FinishedState[], cutoff: number) =>
        store.deleteFinishedBefore({ states, olderThanMs: Math.max(0, Math.floor(ctx.now() - cutoff)), limit: 100, queues: [queue] });
      assert.equal(await removeBefore(["succeeded", "cancelled"], middle), 2);
      assert.equal(await removeBefore(["dead"], oldEnd - 3_600_000), 0);
      const active: Record<string, JobState> = { [queued!.id]: "queued", [running!.id]: "running", [failed!.id]: "failed" };
      const young: Record<string, JobState> = {
        [youngSucceeded!.id]: "succeeded",
        [youngDead!.id]: "dead",
        [youngCancelled!.id]: "cancelled",
      };
      await assertListedOnce(store, queue, { [oldDead!.id]: "dead", ...young, ...active });
      for (const gone of [oldSucceeded!, oldCancelled!]) assert.equal(await store.getJob({ id: gone.id }), undefined);
      assertFields(await store.getJob({ id: oldDead!.id }), { state: "dead", errorCode: permanent.code });

      assert.equal(await removeBefore(["dead"], middle), 1);
      await assertListedOnce(store, queue, { ...young, ...active });

      const youngEnd = await lastFinish(store, [youngSucceeded!.id, youngDead!.id, youngCancelled!.id]);
      await ctx.harness().waitUntilPast(new Date(youngEnd + 1));
      assert.equal(await store.deleteFinishedBefore({ states: FINISHED, olderThanMs: 0, limit: 100, queues: [queue] }), 3);
      await assertListedOnce(store, queue, active);
    });

    testCase("removes every job due to go when called until it returns less than limit, however many one call takes", async () => {
      const queue = ctx.freshQueue();
      const store = ctx.store();
      const old = await finishEach(store, queue, ["succeed", "succeed", "succeed", "succeed", "succeed", "die"]);
      const oldEnd = await lastFinish(
        store,
        old.map((job) => job.id),
      );
      await ctx.harness().waitUntilPast(new Date(oldEnd + GROUP_GAP_MS));
      const young = await finishEach(store, queue, ["succeed", "succeed"]);
      const olderThanMs = Math.max(0, Math.floor(ctx.now() - (oldEnd + GROUP_GAP_MS / 2)));

      const limit = 2;
      let removed = 0;
      for (let call = 1; ; call += 1) {
        assert.ok(call <= 5, "five calls of limit 2 remove five jobs");
        const count = await store.deleteFinishedBefore({ states: ["succeeded"], olderThanMs, limit, queues: [queue] });
        removed += count;
        if (count < limit) break;
      }
      assert.equal(removed, 5);
      await assertListedOnce(store, queue, { [old[5]!.id]: "dead", [young[0]!.id]: "succeeded", [young[1]!.id]: "succeeded" });
    });

    testCase("removes the attempt history of every job it removes, and keeps a younger job's", async () => {
      const queue = ctx.freshQueue();
      const store = ctx.store();
      const withFailedAttempt = async (how: Ending): Promise<string> => {
        const { id } = await store.enqueue(newJob(queue, { how }));
        const job = await claimOne(store, queue, "w");
        await store.scheduleRetries({ workerId: "w", jobs: [{ ...job, delayMs: 0, failure: transient, spendAttempt: true }] });
        await finishNext(store, queue, how);
        assert.equal((await store.listAttempts({ jobId: id })).length, 2, `job ${id} has two attempts on record`);
        return id;
      };
      const old = [await withFailedAttempt("succeed"), await withFailedAttempt("die"), await withFailedAttempt("cancel")];
      const oldEnd = await lastFinish(store, old);
      await ctx.harness().waitUntilPast(new Date(oldEnd + GROUP_GAP_MS));
      const young = await withFailedAttempt("succeed");
      const olderThanMs = Math.max(0, Math.floor(ctx.now() - (oldEnd + GROUP_GAP_MS / 2)));
      assert.equal(await store.deleteFinishedBefore({ states: FINISHED, olderThanMs, limit: 100, queues: [queue] }), 3);
      for (const id of old) {
        assert.equal(await store.getJob({ id }), undefined);
        assert.deepStrictEqual(await store.listAttempts({ jobId: id }), []);
      }
      assert.deepStrictEqual(
        (await store.listAttempts({ jobId: young })).map((attempt) => [attempt.attempt, attempt.outcome]),
        [
          [1, "failed"],
          [2, "succeeded"],
        ],
      );
    });
  });

  suite("retried finished jobs", () => {
    testCase("makes a retried dead job active again under its id, listed once, and keeps it readable when it succeeds", async () => {
      const queue = ctx.freshQueue();
      const store = ctx.store();
      const { id } = await store.enqueue(newJob(queue, { invoiceId: 812 }, { maxAttempts: 1, dedupeKey: "invoice:812" }));
      await finishNext(store, queue, "die");
      const firstDeath = (await store.getJob({ id }))!.finishedAt!;
      await ctx.harness().waitUntilPast(new Date(firstDeath.getTime() + 1));

      assert.equal(await store.retryJob({ id }), true);
      assertFields(await store.getJob({ id }), { id, state: "queued", attempts: 1, maxAttempts: 2, finishedAt: null, lockedUntil: null });
      await assertListedOnce(store, queue, { [id]: "queued" });
      assert.deepStrictEqual(await store.listJobs({ queue, states: ["dead"], limit: 10 }), []);
      assertFields(await store.enqueue(newJob(queue, { invoiceId: 812 }, { dedupeKey: "invoice:812" })), { id, duplicate: true });

      const again = await claimOne(store, queue, "w2");
      assertFields(again, { id, attempt: 2 });
      await store.completeJobs({ workerId: "w2", jobs: [{ ...again, resultJson: '{"sent":true}', durationMs: 2 }] });
      const done = await store.getJob({ id });
      assertFields(done, { id, state: "succeeded", attempts: 2, result: { sent: true } });
      assert.ok(done!.finishedAt!.getTime() > firstDeath.getTime(), "the second finish has its own time");
      await assertListedOnce(store, queue, { [id]: "succeeded" });
      assert.deepStrictEqual(
        (await store.listAttempts({ jobId: id })).map((attempt) => [attempt.attempt, attempt.outcome]),
        [
          [1, "dead"],
          [2, "succeeded"],
        ],
      );
      assertFields(await awaitJobEnd(store, { id }, QUICK_WAIT), { id, result: { sent: true } });
    });

    testCase("lets jobs retried from dead (one by one or in bulk) and from cancelled die again, each listed once, and removes them once", async () => {
      const queue = ctx.freshQueue();
      const store = ctx.store();
      const [byId, inBulk, cancelled] = await store.enqueueMany([
        newJob(queue, { n: 1 }, { maxAttempts: 1, priority: 3 }),
        newJob(queue, { n: 2 }, { maxAttempts: 1, priority: 2 }),
        newJob(queue, { n: 3 }, { delayMs: 3_600_000 }),
      ]);
      await finishNext(store, queue, "die");
      await finishNext(store, queue, "die");
      assert.equal(await store.cancelJob({ id: cancelled!.id }), true);
      const firstEnd = await lastFinish(store, [byId!.id, inBulk!.id, cancelled!.id]);
      await ctx.harness().waitUntilPast(new Date(firstEnd + 1));

      assert.equal(await store.retryJob({ id: byId!.id }), true);
      assert.equal(await store.retryDeadJobs({ queue, limit: 10 }), 1);
      assert.equal(await store.retryJob({ id: cancelled!.id }), true);
      await assertListedOnce(store, queue, { [byId!.id]: "queued", [inBulk!.id]: "queued", [cancelled!.id]: "queued" });

      const claimed = await store.claimBatch({ queue, workerId: "w2", limit: 3, leaseMs: 60_000 });
      assert.deepStrictEqual(
        claimed.map((job) => [job.id, job.attempt]),
        [
          [byId!.id, 2],
          [inBulk!.id, 2],
          [cancelled!.id, 1],
        ],
      );
      const failure = { message: "PermanentError: still no invoice", code: "STINT_PERMANENT" };
      assert.equal((await store.markJobsDead({ workerId: "w2", jobs: claimed.map((job) => ({ ...job, failure })) })).length, 3);
      await assertListedOnce(store, queue, { [byId!.id]: "dead", [inBulk!.id]: "dead", [cancelled!.id]: "dead" });
      for (const job of claimed) {
        const record = await store.getJob({ id: job.id });
        assertFields(record, { state: "dead", attempts: job.attempt, lastError: failure.message });
        assert.ok(record!.finishedAt!.getTime() > firstEnd, `job ${job.id} has its second finish time`);
      }
      assert.deepStrictEqual(
        (await store.listAttempts({ jobId: byId!.id })).map((attempt) => [attempt.attempt, attempt.outcome]),
        [
          [1, "dead"],
          [2, "dead"],
        ],
      );

      await ctx.harness().waitUntilPast(new Date((await lastFinish(store, [byId!.id, inBulk!.id, cancelled!.id])) + 1));
      assert.equal(await store.deleteFinishedBefore({ states: ["dead"], olderThanMs: 0, limit: 100, queues: [queue] }), 3);
      await assertListedOnce(store, queue, {});
      assert.deepStrictEqual(await store.listAttempts({ jobId: byId!.id }), []);
    });
  });
}
