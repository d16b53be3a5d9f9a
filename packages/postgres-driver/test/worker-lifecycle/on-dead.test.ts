import { expect } from "chai";
import {
  ErrorCode,
  errorCodeOf,
  permanent,
  WorkerEvents,
  type DeadJobContext,
  type JobOnDeadFailedEvent,
  type JobRecord,
  type LogFields,
  type Logger,
  type WorkerOptions,
} from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { ScriptedWorker, TaskJob, deferred, schemaPerTest, type Script } from "./scripted-worker";

/** One call of `onDead`, as the hook saw it. */
interface DeadCall {
  readonly job: JobRecord;
  readonly error: Error;
  readonly ctx: DeadJobContext;
}

/** A logger that keeps its lines. */
class LinesLog implements Logger {
  readonly lines: { readonly level: string; readonly message: string }[] = [];
  error(message: string): void {
    this.lines.push({ level: "error", message });
  }
  warn(message: string): void {
    this.lines.push({ level: "warn", message });
  }
  info(message: string): void {
    this.lines.push({ level: "info", message });
  }
  debug(message: string): void {
    this.lines.push({ level: "debug", message });
  }
  child(_fields: LogFields): Logger {
    return this;
  }
}

describe("onDead: the hook every road to dead calls once", function () {
  this.timeout(30_000);
  const test = schemaPerTest();
  const store = () => test.schema().store;

  /** A worker whose `onDead` records its calls into `calls`. */
  function worker(calls: DeadCall[], script: Omit<Script, "onDead"> & { readonly onDead?: Script["onDead"] }, options: WorkerOptions = {}): ScriptedWorker {
    return new ScriptedWorker(
      store(),
      {
        ...script,
        onDead: async (job, error, ctx) => {
          calls.push({ job, error, ctx });
          await script.onDead?.(job, error, ctx);
        },
      },
      options,
    );
  }
  async function pendingHooks(): Promise<number> {
    const claims = await store().claimDeadHooks({ queue: TaskJob.name, workerId: "inspector", limit: 1_000, leaseMs: 1 });
    return claims.length;
  }

  it("calls it once for a payload that fails parse, with the ParseError, after the job is dead", async () => {
    const { id } = await store().enqueue(buildNewJob(TaskJob, { n: "not a number" } as never));
    const calls: DeadCall[] = [];
    let stateSeen: string | undefined;
    const summary = await worker(calls, {
      process: async () => undefined,
      onDead: async (job) => {
        stateSeen = (await store().getJob({ id: job.id }))?.state;
      },
    }).start();
    expect(summary).to.include({ dead: 1 });
    expect(calls).to.have.length(1);
    const [call] = calls;
    expect(call!.job).to.include({ id, state: "dead", attempts: 1 });
    expect(errorCodeOf(call!.error)).to.equal(ErrorCode.Parse);
    expect(call!.error.message).to.contain("n must be a number");
    expect(call!.ctx).to.include({ attempt: 1, delivery: 1 });
    expect(stateSeen, "the death is committed before the hook runs").to.equal("dead");
    expect(await pendingHooks()).to.equal(0);
  });

  it("calls it once for a permanent error, with the error the handler threw", async () => {
    const id = await test.enqueue(1);
    const calls: DeadCall[] = [];
    const thrown = permanent(new Error("invoice 1 does not exist"));
    await worker(calls, {
      process: async () => {
        throw thrown;
      },
    }).start();
    expect(calls.map((call) => [call.job.id, call.ctx.attempt])).to.deep.equal([[id, 1]]);
    expect(calls[0]!.error).to.equal(thrown);
  });

  it("calls it once for an error isRetryable rejects (an HTTP 404)", async () => {
    const id = await test.enqueue(1);
    const calls: DeadCall[] = [];
    await worker(calls, {
      process: async () => {
        throw Object.assign(new Error("no such customer"), { status: 404 });
      },
    }).start();
    expect(calls.map((call) => [call.job.id, call.error.message])).to.deep.equal([[id, "no such customer"]]);
  });

  it("calls it once when the attempts run out, not for the retries before", async () => {
    const id = await test.enqueue(1);
    const calls: DeadCall[] = [];
    const summary = await worker(calls, {
      process: async (_item, ctx) => {
        throw new Error(`down on attempt ${ctx.job.attempt}`);
      },
    }).start();
    expect(summary).to.include({ retried: 2, dead: 1 });
    expect(calls.map((call) => [call.job.id, call.ctx.attempt, call.error.message])).to.deep.equal([[id, 3, "down on attempt 3"]]);
  });

  it("calls it once when handleFailure answers dead", async () => {
    const id = await test.enqueue(1);
    const calls: DeadCall[] = [];
    await worker(calls, {
      process: async () => {
        throw new Error("quota exhausted");
      },
      handleFailure: () => ({ action: "dead" }),
    }).start();
    expect(calls.map((call) => [call.job.id, call.ctx.attempt, call.error.message])).to.deep.equal([[id, 1, "quota exhausted"]]);
  });

  it("calls it once when handleFailure throws, with the STINT_HOOK_FAILED error the job died of", async () => {
    const id = await test.enqueue(1);
    const calls: DeadCall[] = [];
    await worker(calls, {
      process: async () => {
        throw new Error("boom");
      },
      handleFailure: () => {
        throw new Error("the alerting client is down");
      },
    }).start();
    expect(calls).to.have.length(1);
    expect(calls[0]!.job.id).to.equal(id);
    expect(errorCodeOf(calls[0]!.error)).to.equal(ErrorCode.HookFailed);
    expect(calls[0]!.job.errorCode).to.equal(ErrorCode.HookFailed);
  });

  it("calls it once when the worker itself loses the lease on the last attempt, with the LeaseLostError", async () => {
    const id = (await store().enqueue(buildNewJob(TaskJob, { n: 1 }, { maxAttempts: 1 }))).id;
    // Heartbeats that never answer: the attempt's local deadline passes and the worker gives the job up itself.
    const hanging = new Proxy(store(), {
      get: (target, name) => {
        if (name === "extendLeases") return () => new Promise(() => undefined);
        const value = Reflect.get(target, name) as unknown;
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const calls: DeadCall[] = [];
    const summary = await new ScriptedWorker(
      hanging,
      {
        process: (_item, ctx) => new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true })),
        onDead: (job, error, ctx) => void calls.push({ job, error, ctx }),
      },
      { leaseMs: 600 },
    ).start();
    expect(summary).to.include({ leaseLost: 1 });
    expect(calls.map((call) => [call.job.id, call.job.state, errorCodeOf(call.error)])).to.deep.equal([[id, "dead", ErrorCode.LeaseLost]]);
  });

  it("calls it once, in a worker that comes later, for a job the lease rescue made dead in SQL", async () => {
    const id = (await store().enqueue(buildNewJob(TaskJob, { n: 1 }, { maxAttempts: 1 }))).id;
    await store().claimBatch({ queue: TaskJob.name, workerId: "killed", limit: 1, leaseMs: 1 });
    await eventually(async () => (await store().rescueExpiredLeases({ limit: 10 })).dead === 1, { timeoutMs: 5_000, what: "the rescue" });
    const calls: DeadCall[] = [];
    const summary = await worker(calls, { process: async () => undefined }).start();
    expect(summary).to.include({ claimed: 0 });
    expect(calls).to.have.length(1);
    expect(calls[0]!.job).to.include({ id, state: "dead" });
    expect(calls[0]!.error.name).to.equal("RecordedError");
    expect(errorCodeOf(calls[0]!.error)).to.equal(ErrorCode.WorkerDied);
    expect(calls[0]!.error.message).to.match(/^The worker killed stopped/);
    expect(calls[0]!.ctx).to.include({ attempt: 1, delivery: 1 });
    expect(await worker(calls, { process: async () => undefined }).start()).to.include({ claimed: 0 });
    expect(calls, "a second worker finds nothing left to run").to.have.length(1);
  });

  it("logs and emits a hook that throws, leaves the job dead and does not call it again", async () => {
    const id = await test.enqueue(1);
    const log = new LinesLog();
    const failures: JobOnDeadFailedEvent[] = [];
    const calls: DeadCall[] = [];
    const failing = worker(calls, {
      log,
      process: async () => {
        throw permanent(new Error("bad invoice"));
      },
      onDead: () => {
        throw new Error("the pager is down");
      },
    });
    failing.events.on("job.onDeadFailed", (event) => void failures.push(event));
    const summary = await failing.start();
    expect(summary).to.include({ dead: 1 });
    expect(calls).to.have.length(1);
    expect(failures.map((event) => [event.jobId, event.attempt, event.error.message, event.timedOut, event.delivery])).to.deep.equal([
      [id, 1, "the pager is down", false, 1],
    ]);
    expect(log.lines.filter((line) => line.level === "error" && line.message.startsWith("onDead failed")).map((line) => line.message)).to.deep.equal([
      `onDead failed for dead job ${id} (task, attempt 1/3): the pager is down; the job stays dead and the hook is not called again`,
    ]);
    expect(await store().getJob({ id })).to.include({ state: "dead", errorCode: ErrorCode.Permanent });
    expect(await pendingHooks()).to.equal(0);
  });

  it("runs a slow hook outside the handler slots, and aborts it at onDeadTimeoutMs without changing the job", async () => {
    const dies = await test.enqueue(1);
    const hookStarted = deferred();
    const events = new WorkerEvents();
    const failures: JobOnDeadFailedEvent[] = [];
    events.on("job.onDeadFailed", (event) => void failures.push(event));
    const completedWhileHookRan: string[] = [];
    let hookRunning = false;
    let abortCode: string | undefined;
    const calls: DeadCall[] = [];
    const slow = worker(
      calls,
      {
        process: async (item, ctx) => {
          if (item.n === 1) throw permanent(new Error("bad"));
          if (hookRunning) completedWhileHookRan.push(ctx.job.id);
        },
        onDead: async (_job, _error, ctx) => {
          hookRunning = true;
          hookStarted.resolve();
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
          abortCode = errorCodeOf(ctx.signal.reason);
          hookRunning = false;
        },
      },
      { concurrency: 1, onDeadTimeoutMs: 1_500 },
    );
    const stop = new AbortController();
    const run = slow.start({ mode: "loop", pollIntervalMs: 50, events, signal: stop.signal });
    await hookStarted.promise;
    const later = [await test.enqueue(2), await test.enqueue(3)];
    await eventually(() => failures.length === 1, { timeoutMs: 10_000, what: "the hook to time out" });
    expect(completedWhileHookRan.sort(), "the only handler slot stayed free").to.deep.equal(later.sort());
    expect(abortCode).to.equal(ErrorCode.HookFailed);
    expect(failures[0]).to.include({ jobId: dies, timedOut: true });
    expect(failures[0]!.durationMs).to.be.at.least(1_400);
    expect(await store().getJob({ id: dies })).to.include({ state: "dead" });
    await eventually(async () => (await pendingHooks()) === 0, { timeoutMs: 5_000, what: "the hook to be recorded as done" });
    expect(calls).to.have.length(1);
    stop.abort();
    await run;
  });

  it("runs again for a new death after stint retry, and not again for the old one", async () => {
    const id = await test.enqueue(1);
    const calls: DeadCall[] = [];
    const failingOnce = () =>
      worker(calls, {
        process: async (_item, ctx) => {
          throw permanent(new Error(`no luck on attempt ${ctx.job.attempt}`));
        },
      });
    await failingOnce().start();
    expect(await store().retryJob({ id })).to.equal(true);
    await failingOnce().start();
    expect(calls.map((call) => [call.job.id, call.ctx.attempt, call.error.message])).to.deep.equal([
      [id, 1, "no luck on attempt 1"],
      [id, 2, "no luck on attempt 2"],
    ]);
    expect(await store().getJob({ id })).to.include({ state: "dead", attempts: 2 });
  });

  it("calls it again, as delivery 2, when the worker that claimed it died inside it", async () => {
    const id = await test.enqueue(1);
    const [job] = await store().claimBatch({ queue: TaskJob.name, workerId: "w", limit: 1, leaseMs: 60_000 });
    await store().markJobsDead({ workerId: "w", jobs: [{ ...job!, failure: { message: "PermanentError: bad", code: ErrorCode.Permanent } }] });
    // Claimed by a process that then died inside the hook: its claim lapses.
    const [doomed] = await store().claimDeadHooks({ queue: TaskJob.name, workerId: "died-in-hook", limit: 1, leaseMs: 1 });
    expect(doomed).to.include({ jobId: id, delivery: 1 });
    const calls: DeadCall[] = [];
    await eventually(
      async () => {
        await worker(calls, { process: async () => undefined }).start();
        return calls.length > 0;
      },
      { timeoutMs: 5_000, what: "the lapsed claim to be run again" },
    );
    expect(calls.map((call) => [call.job.id, call.ctx.delivery, errorCodeOf(call.error), call.error.message])).to.deep.equal([
      [id, 2, ErrorCode.Permanent, "PermanentError: bad"],
    ]);
  });

  it("never calls it twice when two workers race for the pending hooks", async () => {
    const ids = (await store().enqueueMany(Array.from({ length: 40 }, (_, n) => buildNewJob(TaskJob, { n }, { maxAttempts: 1 })))).map((job) => job.id);
    await store().claimBatch({ queue: TaskJob.name, workerId: "killed", limit: 40, leaseMs: 1 });
    await eventually(async () => (await store().rescueExpiredLeases({ limit: 100 })).dead === 40, { timeoutMs: 5_000, what: "the rescue" });
    const calls: DeadCall[] = [];
    const slowHook = { process: async () => undefined, onDead: () => new Promise<void>((resolve) => setTimeout(resolve, 5)) };
    await Promise.all([worker(calls, slowHook, { concurrency: 3 }).start(), worker(calls, slowHook, { concurrency: 3 }).start()]);
    expect(calls.map((call) => call.job.id).sort()).to.deep.equal([...ids].sort());
    expect(new Set(calls.map((call) => call.ctx.workerId)).size, "both workers ran some").to.equal(2);
  });
});
