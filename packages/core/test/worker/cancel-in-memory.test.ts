import { expect } from "chai";
import { ErrorCode } from "../../src/errors/error-codes";
import { errorCodeOf } from "../../src/errors/stint-error";
import type { JobCancelledEvent } from "../../src/events/worker-events";
import { buildNewJob } from "../../src/job/enqueue-options";
import type { CancelledAttempt, WakeupListener, WakeupSource } from "../../src/runtime/coordination";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { settle } from "../../src/testing/settle";
import { gate, Task, TaskWorker, untilAborted } from "../support/task-worker";

/** Wake-ups a test drives by hand: it hands the worker's `onCancelled` to the test. */
class HandWakeups implements WakeupSource {
  onCancelled: ((attempt: CancelledAttempt) => void) | undefined;

  subscribe(_queues: readonly string[], listener: WakeupListener) {
    this.onCancelled = listener.onCancelled;
    return Promise.resolve({ close: () => Promise.resolve() });
  }
}

describe("a job an operator cancels while a worker holds it (in-memory store)", () => {
  let clock: ManualClock;
  let store: InMemoryJobStore;

  beforeEach(() => {
    clock = new ManualClock();
    store = new InMemoryJobStore({ clock });
  });

  /** A worker whose handler waits for its signal; `reason()` is what the signal aborted with. */
  function waitingWorker(options: { readonly concurrency?: number; readonly prefetch?: number } = {}) {
    const started = gate();
    let reason: unknown;
    const runs: number[] = [];
    const worker = new TaskWorker(
      store,
      async (item, ctx) => {
        runs.push(item.n);
        started.open();
        return untilAborted(ctx.signal).catch((thrown: unknown) => Promise.reject((reason = thrown)));
      },
      { leaseMs: 60_000, clock, ...options },
    );
    const cancelled: JobCancelledEvent[] = [];
    worker.events.on("job.cancelled", (event) => cancelled.push(event));
    return { worker, started, runs, cancelled, reason: () => reason };
  }

  it("stops the handler with CancelledError at the next heartbeat when no wake-up tells it, writes nothing after the cancel, and calls no onDead", async () => {
    // The last attempt: a lost lease here would make the job dead and call onDead.
    const { id } = await store.enqueue(buildNewJob(Task, { n: 1 }, { maxAttempts: 1 }));
    const { worker, started, cancelled, reason } = waitingWorker();
    const run = worker.start();
    await started.opened;
    expect(await store.cancelJob({ id })).to.equal(true);
    const afterCancel = await store.getJob({ id });

    await clock.advance(worker.options.heartbeatIntervalMs - 1);
    expect(reason(), "no heartbeat yet").to.equal(undefined);
    await clock.advance(1);
    expect(errorCodeOf(reason())).to.equal(ErrorCode.Cancelled);
    expect((reason() as Error).message).to.equal(`job ${id} (attempt 1) was cancelled while it ran; its handler must stop`);

    const summary = await run;
    expect(summary).to.include({ claimed: 1, cancelled: 1, leaseLost: 0, retried: 0, dead: 0, succeeded: 0, writeFailed: 0 });
    expect(await store.getJob({ id }), "the attempt wrote nothing after the cancel").to.deep.equal(afterCancel);
    expect((await store.listAttempts({ jobId: id })).map((attempt) => attempt.outcome)).to.deep.equal(["cancelled"]);
    expect(worker.deaths).to.deep.equal([]);
    expect(cancelled.map(({ jobId, started: began, discarded }) => ({ jobId, began, discarded }))).to.deep.equal([{ jobId: id, began: true, discarded: null }]);
  });

  it("stops the handler at once when the wake-ups report the cancel, and ignores a notice for another worker", async () => {
    const { id } = await store.enqueue(buildNewJob(Task, { n: 1 }));
    const wakeups = new HandWakeups();
    const { worker, started, reason } = waitingWorker();
    const stop = new AbortController();
    const run = worker.start({ mode: "loop", wakeups, signal: stop.signal });
    await started.opened;
    await store.cancelJob({ id });

    wakeups.onCancelled!({ id, attempt: 1, queue: Task.name, workerId: `${worker.workerId}-other` });
    wakeups.onCancelled!({ id, attempt: 2, queue: Task.name, workerId: worker.workerId });
    await settle();
    expect(reason(), "not this worker's attempt").to.equal(undefined);
    wakeups.onCancelled!({ id, attempt: 1, queue: Task.name, workerId: worker.workerId });
    await settle();
    expect(errorCodeOf(reason())).to.equal(ErrorCode.Cancelled);

    stop.abort();
    expect(await run).to.include({ cancelled: 1, leaseLost: 0, retried: 0 });
    expect((await store.getJob({ id }))?.state).to.equal("cancelled");
  });

  it("stops the handler at once when its job was cancelled while the wake-up connection was still being made", async () => {
    const { id } = await store.enqueue(buildNewJob(Task, { n: 1 }));
    const listening = gate();
    // Wake-ups whose connection listens only once the test opens it: a cancel before then is not heard.
    const slowWakeups: WakeupSource = {
      subscribe: async () => {
        await listening.opened;
        return { close: () => Promise.resolve() };
      },
    };
    const { worker, started, reason, cancelled } = waitingWorker();
    const stop = new AbortController();
    const run = worker.start({ mode: "loop", wakeups: slowWakeups, signal: stop.signal });
    await started.opened;
    await store.cancelJob({ id });
    await settle();
    expect(reason(), "nothing told the worker yet").to.equal(undefined);

    listening.open();
    await settle();
    expect(errorCodeOf(reason()), "stopped without the clock moving: no regular heartbeat came").to.equal(ErrorCode.Cancelled);
    expect(cancelled.map((event) => event.jobId)).to.deep.equal([id]);

    stop.abort();
    expect(await run).to.include({ cancelled: 1, leaseLost: 0, retried: 0 });
  });

  it("never starts a buffered job that is cancelled before a slot frees up", async () => {
    const [first, second] = await store.enqueueMany([buildNewJob(Task, { n: 1 }), buildNewJob(Task, { n: 2 })]);
    const wakeups = new HandWakeups();
    const { worker, started, runs, cancelled } = waitingWorker({ concurrency: 1, prefetch: 1 });
    const stop = new AbortController();
    const run = worker.start({ mode: "loop", wakeups, signal: stop.signal });
    await started.opened;
    expect((await store.getJob({ id: second!.id }))?.state, "claimed into the buffer").to.equal("running");

    await store.cancelJob({ id: second!.id });
    wakeups.onCancelled!({ id: second!.id, attempt: 1, queue: Task.name, workerId: worker.workerId });
    await store.cancelJob({ id: first!.id });
    wakeups.onCancelled!({ id: first!.id, attempt: 1, queue: Task.name, workerId: worker.workerId });
    await settle();
    stop.abort();

    expect(await run).to.include({ claimed: 2, cancelled: 2, released: 0, leaseLost: 0 });
    expect(runs).to.deep.equal([1]);
    expect(cancelled.map((event) => [event.jobId, event.started])).to.have.deep.members([
      [first!.id, true],
      [second!.id, false],
    ]);
    expect((await store.listAttempts({ jobId: second!.id })).map((attempt) => attempt.outcome)).to.deep.equal(["cancelled"]);
  });

  it("counts an outcome the fence refused because the job was cancelled as cancelled, not as a lost lease, and does not retry it", async () => {
    const [succeeds, fails] = await store.enqueueMany([buildNewJob(Task, { n: 1 }), buildNewJob(Task, { n: 2 })]);
    const worker = new TaskWorker(
      store,
      async (item, ctx) => {
        // The cancel commits, but the worker has not heard of it when the handler ends.
        await store.cancelJob({ id: ctx.job.id });
        if (item.n === 2) throw new Error("upstream 503");
        return "done";
      },
      { clock },
    );
    const cancelled: JobCancelledEvent[] = [];
    worker.events.on("job.cancelled", (event) => cancelled.push(event));
    const summary = await worker.start();

    expect(summary).to.include({ claimed: 2, cancelled: 2, leaseLost: 0, succeeded: 0, retried: 0 });
    expect(cancelled.map((event) => [event.jobId, event.discarded])).to.have.deep.members([
      [succeeds!.id, "succeeded"],
      [fails!.id, "retry"],
    ]);
    for (const { id } of [succeeds!, fails!]) expect((await store.getJob({ id }))?.state).to.equal("cancelled");
  });
});
