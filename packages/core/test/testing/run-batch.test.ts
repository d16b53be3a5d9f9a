import { expect } from "chai";
import { ErrorCode } from "../../src/errors/error-codes";
import { PermanentError } from "../../src/errors/job-errors";
import { errorCodeOf } from "../../src/errors/stint-error";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { runBatch } from "../../src/testing/run-batch";
import { settle } from "../../src/testing/settle";
import { BatchTaskWorker, type BatchHandler } from "../support/batch-task-worker";
import { TaskWorker, untilAborted } from "../support/task-worker";

describe("runBatch", () => {
  const worker = (handler: BatchHandler, clock = new ManualClock()) => new BatchTaskWorker(new InMemoryJobStore({ clock }), handler, { batchSize: 10, clock });

  it("gives each job its own outcome: succeeded, retry, dead, and dead with STINT_PARSE for a payload that does not parse", async () => {
    const results = await runBatch(
      worker(async (entries, ctx) => {
        for (const entry of entries) {
          if (entry.item.n === 2) ctx.fail(entry, new Error("the mail server said try later"));
          else if (entry.item.n === 3) ctx.fail(entry, new PermanentError("no such mailbox"));
          else ctx.succeed(entry, { sent: entry.item.n });
        }
      }),
      [{ n: 1 }, { n: 2 }, { n: 3 }, { n: "four" as unknown as number }],
    );
    expect(results.map((result) => result.status)).to.deep.equal(["succeeded", "retry", "dead", "dead"]);
    expect(results[0]).to.include({ status: "succeeded", recorded: true }).and.nested.include({ "result.sent": 1 });
    expect(results[1]!.job).to.include({ state: "failed", attempts: 1 });
    expect(errorCodeOf(results[2]!.status === "dead" ? results[2]!.error : undefined)).to.equal(ErrorCode.Permanent);
    expect(errorCodeOf(results[3]!.status === "dead" ? results[3]!.error : undefined)).to.equal(ErrorCode.Parse);
    expect(results[3]!.job.errorCode).to.equal(ErrorCode.Parse);
  });

  it("succeeds every job not settled when processBatch resolves", async () => {
    const results = await runBatch(
      worker(async (entries, ctx) => {
        ctx.fail(entries[0]!, new PermanentError("refused"));
      }),
      [{ n: 1 }, { n: 2 }, { n: 3 }],
    );
    expect(results.map((result) => result.status)).to.deep.equal(["dead", "succeeded", "succeeded"]);
  });

  it("fails every job not settled with the error processBatch throws, each by its own attempt count", async () => {
    const results = await runBatch(
      worker(async (entries, ctx) => {
        ctx.succeed(entries[0]!);
        throw new Error("the bulk API is down");
      }),
      [{ n: 1 }, { n: 2 }],
      { attempt: 3, maxAttempts: 3 },
    );
    expect(results.map((result) => result.status)).to.deep.equal(["succeeded", "dead"]);
    expect(results[1]!.job.lastError).to.contain("the bulk API is down");
  });

  it("records a job settled early while the rest of the batch still runs", async () => {
    let firstState: string | undefined;
    const store = new InMemoryJobStore();
    const results = await runBatch(
      new BatchTaskWorker(
        store,
        async (entries, ctx) => {
          ctx.succeed(entries[0]!);
          await settle();
          firstState = (await store.getJob({ id: entries[0]!.job.id }))?.state;
        },
        { batchSize: 2 },
      ),
      [{ n: 1 }, { n: 2 }],
      { store },
    );
    expect(firstState).to.equal("succeeded");
    expect(results.map((result) => result.status)).to.deep.equal(["succeeded", "succeeded"]);
  });

  it("aborts the batch at the shortest timeout of its jobs and fails the jobs not settled with STINT_TIMEOUT", async () => {
    const clock = new ManualClock();
    const running = runBatch(
      worker(async (entries, ctx) => {
        ctx.succeed(entries[0]!);
        await untilAborted(ctx.signal);
      }, clock),
      [{ n: 1 }, { n: 2 }],
      { clock, timeoutMs: 5_000 },
    );
    await settle();
    await clock.advance(5_000);
    const results = await running;
    expect(results.map((result) => result.status)).to.deep.equal(["succeeded", "retry"]);
    expect(results[1]!.job.errorCode).to.equal(ErrorCode.Timeout);
  });

  it("releases the jobs not settled when its signal aborts, as at shutdown", async () => {
    const controller = new AbortController();
    const results = await runBatch(
      worker(async (entries, ctx) => {
        ctx.succeed(entries[0]!);
        controller.abort();
        await untilAborted(ctx.signal);
      }),
      [{ n: 1 }, { n: 2 }],
      { signal: controller.signal },
    );
    expect(results.map((result) => result.status)).to.deep.equal(["succeeded", "released"]);
    expect(results[1]!.job).to.include({ state: "queued" });
  });

  it("runs processItem on each job in turn when the worker does not write processBatch", async () => {
    const seen: number[] = [];
    const plain = new TaskWorker(
      new InMemoryJobStore(),
      async (item) => {
        seen.push(item.n);
        if (item.n === 2) throw new PermanentError("bad");
        return item.n * 10;
      },
      { batchSize: 5 },
    );
    const results = await runBatch(plain, [{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(seen).to.deep.equal([1, 2, 3]);
    expect(results.map((result) => result.status)).to.deep.equal(["succeeded", "dead", "succeeded"]);
    expect(results[2]).to.include({ result: 30 });
  });

  it("settles a job once: a second succeed or fail changes nothing", async () => {
    let second: boolean | undefined;
    const results = await runBatch(
      worker(async (entries, ctx) => {
        ctx.fail(entries[0]!, new PermanentError("refused"));
        second = ctx.succeed(entries[0]!);
      }),
      [{ n: 1 }],
    );
    expect(second).to.equal(false);
    expect(results[0]!.status).to.equal("dead");
  });
});
