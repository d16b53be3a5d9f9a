import { expect } from "chai";
import { ErrorCode } from "../../src/errors/error-codes";
import { errorCodeOf } from "../../src/errors/stint-error";
import { buildNewJob } from "../../src/job/enqueue-options";
import { backoffDelay } from "../../src/policy/backoff";
import type { WakeupSource } from "../../src/runtime/coordination";
import { eventually } from "../../src/testing/eventually";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { settle } from "../../src/testing/settle";
import { enqueueTasks, gate, Task, taskStates, TaskWorker, untilAborted, type Handler } from "../support/task-worker";

describe("a worker run on the in-memory store", () => {
  let clock: ManualClock;
  let store: InMemoryJobStore;

  beforeEach(() => {
    clock = new ManualClock();
    store = new InMemoryJobStore({ clock });
  });

  const enqueue = (count: number) => enqueueTasks(store, count);
  const states = () => taskStates(store);

  it("drains the queue once and stops when no job is due", async () => {
    await enqueue(25);
    const seen: number[] = [];
    const summary = await new TaskWorker(store, async (item) => seen.push(item.n), { concurrency: 4, clock }).start();
    expect(summary).to.include({ claimed: 25, succeeded: 25, stoppedBecause: "drained" });
    expect(seen.sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 25 }, (_, n) => n));
    expect(await states()).to.deep.equal({ succeeded: 25 });
  });

  it("never runs more handlers at once than its concurrency", async () => {
    await enqueue(40);
    let running = 0;
    let most = 0;
    const handler: Handler = async () => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
    };
    const summary = await new TaskWorker(store, handler, { concurrency: 3, prefetch: 5, clock }).start();
    expect(summary).to.include({ succeeded: 40 });
    expect(most).to.equal(3);
  });

  it("holds prefetched jobs leased in its buffer, and starts one as soon as a slot frees up", async () => {
    await enqueue(10);
    const release = gate();
    let started = 0;
    const run = new TaskWorker(
      store,
      async () => {
        started += 1;
        await release.opened;
      },
      { concurrency: 2, prefetch: 3, clock },
    ).start();
    await settle();
    expect(started, "two slots").to.equal(2);
    expect(await states(), "two handlers and three buffered jobs are leased").to.deep.equal({ running: 5, queued: 5 });
    release.open();
    expect(await run).to.include({ claimed: 10, succeeded: 10 });
  });

  it("retries a failure after the backoff on its clock, then runs the next attempt", async () => {
    const { id } = await store.enqueue(buildNewJob(Task, { n: 1 }));
    const worker = new TaskWorker(
      store,
      async (_item, ctx) => {
        if (ctx.job.attempt === 1) throw new Error("the bank timed out");
        return "paid";
      },
      { clock },
    );
    expect(await worker.start(), "the retry is not due yet").to.include({ retried: 1, stoppedBecause: "drained" });
    const delayMs = backoffDelay(1, worker.options.backoff, () => 0.5);
    const failed = await store.getJob({ id });
    expect(failed).to.include({ state: "failed", attempts: 1, errorCode: ErrorCode.Unknown });
    expect(failed!.runAt.getTime() - clock.now()).to.equal(delayMs);

    await clock.advance(delayMs - 1);
    expect(await worker.start()).to.include({ claimed: 0 });
    await clock.advance(1);
    expect(await worker.start()).to.include({ claimed: 1, succeeded: 1 });
    expect(await store.getJob({ id })).to.include({ state: "succeeded", attempts: 2 });
  });

  it("makes a job dead after its last attempt, with every attempt in its history, and calls onDead once", async () => {
    const { id } = await store.enqueue(buildNewJob(Task, { n: 1 }));
    const worker = new TaskWorker(store, async () => Promise.reject(new Error("still down")), { clock });
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      await worker.start();
      await clock.advance(backoffDelay(attempt, worker.options.backoff, () => 0.5));
    }
    expect(await store.getJob({ id })).to.include({ state: "dead", attempts: 3, errorCode: ErrorCode.Unknown });
    expect((await store.listAttempts({ jobId: id })).map((attempt) => attempt.outcome)).to.deep.equal(["failed", "failed", "dead"]);
    expect(worker.deaths).to.deep.equal([id]);
  });

  /**
   * Starts a one-job run whose heartbeats never answer, as on a connection
   * the network silently stopped carrying; `reason()` is what the handler's
   * signal aborted with, if it has.
   */
  async function runWithSilentHeartbeats(options: { readonly durableClaims: boolean }) {
    const { id } = await store.enqueue(buildNewJob(Task, { n: 1 }));
    const silent = new Proxy(store, {
      get: (target, name) =>
        name === "extendLeases" ? () => new Promise(() => undefined) : (Reflect.get(target, name) as unknown as (...args: unknown[]) => unknown).bind(target),
    });
    let reason: unknown;
    const worker = new TaskWorker(silent, async (_item, ctx) => untilAborted(ctx.signal).catch((thrown: unknown) => Promise.reject((reason = thrown))), {
      leaseMs: 3_000,
      clock,
      ...options,
    });
    const run = worker.start({ maxJobs: 1 });
    await settle();
    return { id, worker, run, reason: () => reason };
  }

  it("aborts a handler whose lease lapses while heartbeats go unanswered, on a manual clock", async () => {
    // A claim that may not be on disk would be stopped at the first unanswered heartbeat (next test).
    const { id, worker, run, reason } = await runWithSilentHeartbeats({ durableClaims: true });
    const deadlineMs = worker.options.leaseMs - worker.options.leaseMarginMs;
    await clock.advance(deadlineMs - 1);
    expect(reason(), "still within the lease").to.equal(undefined);
    await clock.advance(1);
    expect(errorCodeOf(reason())).to.equal(ErrorCode.LeaseLost);
    expect(await run).to.include({ leaseLost: 1 });
    const [attempt] = await store.listAttempts({ jobId: id });
    expect(attempt).to.include({ outcome: "lease-lost", attempt: 1 });
  });

  it("stops the handler of a claim not yet proved on disk at the first unanswered heartbeat, before its deadline", async () => {
    const { worker, run, reason } = await runWithSilentHeartbeats({ durableClaims: false });
    const { heartbeatIntervalMs, heartbeatTimeoutMs } = worker.options;
    await clock.advance(heartbeatIntervalMs + heartbeatTimeoutMs - 1);
    expect(reason(), "the heartbeat may still answer").to.equal(undefined);
    await clock.advance(1);
    expect(errorCodeOf(reason())).to.equal(ErrorCode.LeaseLost);
    expect((reason() as Error).message).to.contain("may not have reached disk");
    expect(await run).to.include({ leaseLost: 1 });
  });

  it("stops claiming while its completions go unanswered (a synchronous standby that does not answer), claims waiting for their flush after a lease, and drains once they answer", async () => {
    await enqueue(60);
    const answered = gate();
    const started = clock.now();
    const claims: { readonly at: number; readonly durable: boolean }[] = [];
    const stalled = new Proxy(store, {
      get: (target, name) => {
        const method = (Reflect.get(target, name) as unknown as (...args: unknown[]) => Promise<unknown>).bind(target);
        if (name === "completeJobs") return (...args: unknown[]) => answered.opened.then(() => method(...args));
        if (name === "claimBatch") {
          return (params: { readonly durable?: boolean }) => {
            claims.push({ at: clock.now() - started, durable: params.durable === true });
            return method(params);
          };
        }
        return method;
      },
    });
    const worker = new TaskWorker(stalled, () => clock.sleep(100), { concurrency: 1, prefetch: 1, leaseMs: 3_000, clock });
    const { heartbeatTimeoutMs, leaseMs } = worker.options;
    const run = worker.start();
    while (clock.now() - started < leaseMs - 100) await clock.advance(50);
    const held = claims.filter((claim) => claim.at > heartbeatTimeoutMs + 100);
    expect(held, `claims at ${claims.map((claim) => claim.at).join(", ")} ms`).to.deep.equal([]);
    expect(claims.every((claim) => !claim.durable)).to.equal(true);
    while (clock.now() - started < 2 * leaseMs) await clock.advance(50);
    const later = claims.filter((claim) => claim.at >= leaseMs);
    expect(later.length, "claims go out again after a lease").to.be.above(0);
    expect(
      later.every((claim) => claim.durable),
      "waiting for their flush",
    ).to.equal(true);
    answered.open();
    while ((await states())["succeeded"] !== 60) await clock.advance(50);
    expect(await run).to.include({ succeeded: 60, stoppedBecause: "drained" });
  });

  it("hands buffered jobs back unspent at shutdown, and the running one after the shutdown timeout", async () => {
    await enqueue(5);
    const stop = new AbortController();
    const worker = new TaskWorker(store, async (_item, ctx) => untilAborted(ctx.signal), { concurrency: 1, prefetch: 4, shutdownTimeoutMs: 1_000, clock });
    const run = worker.start({ signal: stop.signal });
    await settle();
    expect(await states()).to.deep.equal({ running: 5 });
    stop.abort();
    await clock.advance(1_000);
    expect(await run).to.include({ claimed: 5, released: 5, stoppedBecause: "signal" });
    const jobs = await store.listJobs({ queue: Task.name, limit: 10 });
    expect(jobs.map((job) => [job.state, job.attempts, job.maxAttempts])).to.deep.equal(Array.from({ length: 5 }, () => ["queued", 1, 4]));
    const histories = await Promise.all(jobs.map((job) => store.listAttempts({ jobId: job.id })));
    expect(
      histories.flat().map((attempt) => attempt.outcome),
      "only the started one records an attempt",
    ).to.deep.equal(["shutdown"]);
  });

  it("claims before its wake-up connection is made, and looks again once it is, for a job enqueued unheard meanwhile", async () => {
    await store.enqueue(buildNewJob(Task, { n: 1 }));
    const connected = gate();
    let closed = false;
    const wakeups: WakeupSource = {
      subscribe: async () => {
        await connected.opened;
        return { close: () => Promise.resolve(void (closed = true)) };
      },
    };
    const seen: number[] = [];
    const stop = new AbortController();
    const run = new TaskWorker(store, async (item) => seen.push(item.n), { clock }).start({ mode: "loop", wakeups, signal: stop.signal });
    await eventually(() => seen.length === 1, { timeoutMs: 5_000, what: "the first job to run while the wake-up connection is being made" });

    // Idle on a clock that does not move, the loop would wait for a wake-up: one sent now would not be heard.
    await store.enqueue(buildNewJob(Task, { n: 2 }));
    await settle();
    expect(seen, "not looked for yet").to.deep.equal([1]);
    connected.open();
    await eventually(() => seen.length === 2, { timeoutMs: 5_000, what: "the job enqueued before the connection was made" });
    expect(seen).to.deep.equal([1, 2]);

    stop.abort();
    expect(await run).to.include({ claimed: 2, succeeded: 2 });
    expect(closed, "the subscription is closed at the end").to.equal(true);
  });
});
