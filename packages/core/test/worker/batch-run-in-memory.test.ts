import { expect } from "chai";
import { ErrorCode } from "../../src/errors/error-codes";
import { PermanentError } from "../../src/errors/job-errors";
import { errorCodeOf } from "../../src/errors/stint-error";
import type { ManualClock } from "../../src/testing/manual-clock";
import type { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { settle } from "../../src/testing/settle";
import { BatchTaskWorker } from "../support/batch-task-worker";
import { freshTasks, gate, untilAborted } from "../support/task-worker";

describe("a batch worker run on the in-memory store", () => {
  let clock: ManualClock;
  let store: InMemoryJobStore;
  let enqueue: (count: number) => Promise<unknown>;
  let states: () => Promise<Record<string, number>>;
  beforeEach(() => ({ clock, store, enqueue, states } = freshTasks()));

  it("drains the queue in batches of at most batchSize, counting every job in the summary", async () => {
    await enqueue(250);
    const worker = new BatchTaskWorker(store, async () => undefined, { batchSize: 100, concurrency: 1, prefetch: 100, clock });
    const summary = await worker.start();
    expect(summary).to.include({ claimed: 250, succeeded: 250, stoppedBecause: "drained" });
    expect(worker.batches.map((batch) => batch.length)).to.deep.equal([100, 100, 50]);
    expect(await states()).to.deep.equal({ succeeded: 250 });
  });

  it("counts batches against concurrency, not jobs", async () => {
    await enqueue(30);
    const release = gate();
    const worker = new BatchTaskWorker(store, () => release.opened, { batchSize: 5, concurrency: 2, prefetch: 0, clock });
    const run = worker.start();
    await settle();
    expect(
      worker.batches.map((batch) => batch.length),
      "two batches of five run",
    ).to.deep.equal([5, 5]);
    expect(await states()).to.deep.equal({ running: 10, queued: 20 });
    release.open();
    expect(await run).to.include({ succeeded: 30 });
  });

  it("waits up to batchWaitMs for a short batch to fill, then starts it", async () => {
    await enqueue(3);
    const worker = new BatchTaskWorker(store, async () => undefined, { batchSize: 10, batchWaitMs: 1_000, clock });
    const run = worker.start();
    await settle();
    expect(worker.batches, "nothing starts before the wait is over").to.deep.equal([]);
    await clock.advance(999);
    expect(worker.batches).to.deep.equal([]);
    await clock.advance(1);
    expect(await run).to.include({ succeeded: 3 });
    expect(worker.batches).to.deep.equal([[0, 1, 2]]);
  });

  it("gives back the jobs a batch had not settled when the run stops, and keeps the ones it had", async () => {
    await enqueue(4);
    const stop = new AbortController();
    const worker = new BatchTaskWorker(
      store,
      async (entries, ctx) => {
        ctx.succeed(entries[0]!);
        ctx.succeed(entries[1]!);
        await untilAborted(ctx.signal);
      },
      { batchSize: 4, clock, shutdownTimeoutMs: 1_000 },
    );
    const run = worker.start({ signal: stop.signal });
    await settle();
    stop.abort();
    await clock.advance(1_000);
    expect(await run).to.include({ claimed: 4, succeeded: 2, released: 2 });
    expect(await states()).to.deep.equal({ succeeded: 2, queued: 2 });
  });

  it("stops only a cancelled job's entry: the rest of the batch runs on and succeeds", async () => {
    await enqueue(3);
    let cancelledReason: unknown;
    const worker = new BatchTaskWorker(
      store,
      async (entries) => {
        await store.cancelJob({ id: entries[1]!.job.id });
        cancelledReason = await untilAborted(entries[1]!.ctx.signal).catch((reason: unknown) => reason);
      },
      { batchSize: 3, clock },
    );
    const run = worker.start();
    await settle();
    await clock.advance(worker.options.heartbeatIntervalMs);
    expect(await run).to.include({ succeeded: 2, cancelled: 1 });
    expect(errorCodeOf(cancelledReason)).to.equal(ErrorCode.Cancelled);
    expect(await states()).to.deep.equal({ succeeded: 2, cancelled: 1 });
  });

  it("emits each job's own events, as single jobs do", async () => {
    await enqueue(3);
    const worker = new BatchTaskWorker(
      store,
      async (entries, ctx) => {
        ctx.fail(entries[2]!, new PermanentError("refused"));
      },
      { batchSize: 3, clock },
    );
    const heard: string[] = [];
    worker.events.on("job.started", (event) => heard.push(`started ${event.jobId}`));
    worker.events.on("job.succeeded", (event) => heard.push(`succeeded ${event.jobId}`));
    worker.events.on("job.dead", (event) => heard.push(`dead ${event.jobId}`));
    expect(await worker.start()).to.include({ succeeded: 2, dead: 1 });
    const ids = (await store.listJobs({ queue: "task", limit: 10 })).map((job) => job.id).sort();
    expect([...heard].sort()).to.deep.equal([...ids.map((id) => `started ${id}`), `succeeded ${ids[0]}`, `succeeded ${ids[1]}`, `dead ${ids[2]}`].sort());
  });

  it("writes the successes of a batch as one group: one completion statement for a hundred jobs", async () => {
    await enqueue(100);
    const statements: number[] = [];
    const completeJobs = store.completeJobs.bind(store);
    store.completeJobs = (params) => {
      statements.push(params.jobs.length);
      return completeJobs(params);
    };
    const worker = new BatchTaskWorker(store, async () => undefined, { batchSize: 100, concurrency: 1, prefetch: 0, clock });
    expect(await worker.start()).to.include({ claimed: 100, succeeded: 100 });
    expect(statements).to.deep.equal([100]);
    expect(await states()).to.deep.equal({ succeeded: 100 });
  });

  it("groups the jobs settled by ctx.succeed in one turn, and writes them before the rest of the batch ends", async () => {
    await enqueue(4);
    const statements: number[] = [];
    const completeJobs = store.completeJobs.bind(store);
    store.completeJobs = (params) => {
      statements.push(params.jobs.length);
      return completeJobs(params);
    };
    const release = gate();
    const worker = new BatchTaskWorker(
      store,
      async (entries, ctx) => {
        ctx.succeed(entries[0]!, { first: true });
        ctx.succeed(entries[1]!);
        await release.opened;
      },
      { batchSize: 4, clock },
    );
    const run = worker.start();
    await settle();
    expect(statements, "the two settled jobs, in one statement, while the batch runs").to.deep.equal([2]);
    expect(await states()).to.deep.equal({ succeeded: 2, running: 2 });
    release.open();
    expect(await run).to.include({ succeeded: 4 });
    expect(statements).to.deep.equal([2, 2]);
  });

  it("makes an entry's JobContext on first read: a job that reports progress is recorded after its progress, the rest in a group", async () => {
    await enqueue(3);
    const worker = new BatchTaskWorker(
      store,
      async (entries) => {
        entries[1]!.ctx.progress({ done: 1, of: 1 });
      },
      { batchSize: 3, clock },
    );
    expect(await worker.start()).to.include({ succeeded: 3 });
    const jobs = await store.listJobs({ queue: "task", limit: 10 });
    const withProgress = jobs.filter((job) => job.progress !== null);
    expect(withProgress.map((job) => job.progress)).to.deep.equal([{ done: 1, of: 1 }]);
    expect(await states()).to.deep.equal({ succeeded: 3 });
  });

  it("refuses to settle what is not an entry of the batch, with STINT_CONFIG", async () => {
    await enqueue(2);
    let refusal: unknown;
    const worker = new BatchTaskWorker(
      store,
      async (entries, ctx) => {
        try {
          ctx.succeed({ ...entries[0]! });
        } catch (thrown) {
          refusal = thrown;
        }
      },
      { batchSize: 2, clock },
    );
    expect(await worker.start()).to.include({ succeeded: 2 });
    expect(errorCodeOf(refusal)).to.equal(ErrorCode.Config);
  });
});
