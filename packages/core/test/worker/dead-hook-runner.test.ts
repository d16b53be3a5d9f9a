import { expect } from "chai";
import { ErrorCode } from "../../src/errors/error-codes";
import { PermanentError } from "../../src/errors/job-errors";
import { errorCodeOf } from "../../src/errors/stint-error";
import { RunEvents } from "../../src/events/run-events";
import { WorkerEvents, type JobOnDeadFailedEvent } from "../../src/events/worker-events";
import type { ClaimedJob, JobRecord } from "../../src/job/job-record";
import { EMPTY_META } from "../../src/job/job-meta";
import type { LogFields, Logger } from "../../src/logging/logger";
import type { DeadHookClaim } from "../../src/store/dead-hook-claim";
import type { JobAttempt, JobStore } from "../../src/store/job-store";
import type { DeadJobContext } from "../../src/worker/dead-job-context";
import { DEAD_HOOK_LEASE_MARGIN_MS, DEAD_HOOK_POLL_MS, DeadHookRunner, type DeadHook } from "../../src/worker/dead-hook-runner";
import { StoreRetryPolicy } from "../../src/worker/store-retry-policy";
import { resolveWorkerOptions } from "../../src/worker/worker-options";
import { ManualClock } from "../../src/testing/manual-clock";
import { settle } from "../../src/testing/settle";

const QUEUE = "task";

/** Keeps the deaths whose hook has not run, as the store would; records claims and finishes. */
class PendingHooksStore {
  readonly pending: DeadHookClaim[] = [];
  /** The `limit` of every claim. */
  readonly claims: number[] = [];
  readonly leases: number[] = [];
  readonly finished: JobAttempt[] = [];
  failClaims = 0;

  claimDeadHooks(params: { readonly limit: number; readonly leaseMs: number }): Promise<readonly DeadHookClaim[]> {
    this.claims.push(params.limit);
    this.leases.push(params.leaseMs);
    if (this.failClaims > 0) {
      this.failClaims -= 1;
      return Promise.reject(new Error("connection refused"));
    }
    return Promise.resolve(this.pending.splice(0, params.limit));
  }
  finishDeadHooks(params: { readonly hooks: readonly JobAttempt[] }): Promise<readonly string[]> {
    this.finished.push(...params.hooks);
    return Promise.resolve(params.hooks.map((hook) => hook.id));
  }
}

class LinesLog implements Logger {
  readonly lines: { level: string; message: string }[] = [];
  error(message: string) {
    this.lines.push({ level: "error", message });
  }
  warn(message: string) {
    this.lines.push({ level: "warn", message });
  }
  info(message: string) {
    this.lines.push({ level: "info", message });
  }
  debug(message: string) {
    this.lines.push({ level: "debug", message });
  }
  child(_fields: LogFields): Logger {
    return this;
  }
}

function jobRecord(id: string): JobRecord {
  const at = new Date(0);
  return {
    id,
    queue: QUEUE,
    payload: { n: Number(id) },
    state: "dead",
    priority: 0,
    attempts: 1,
    maxAttempts: 3,
    runAt: at,
    timeoutMs: null,
    lockedBy: "w",
    lockedUntil: null,
    dedupeKey: null,
    group: null,
    serialKey: null,
    workflowId: null,
    step: null,
    startBy: null,
    lastError: "Error: boom",
    errorCode: ErrorCode.Unknown,
    result: null,
    createdAt: at,
    startedAt: at,
    finishedAt: at,
    durationMs: 1,
    updatedAt: at,
    meta: EMPTY_META,
    progress: null,
  };
}

function death(id: string, overrides: Partial<DeadHookClaim> = {}): DeadHookClaim {
  return {
    jobId: id,
    attempt: 1,
    delivery: 1,
    diedAt: new Date(0),
    errorCode: ErrorCode.Unknown,
    lastError: "Error: boom\n    at x",
    job: jobRecord(id),
    ...overrides,
  };
}

function claimed(id: string): ClaimedJob {
  return { id, queue: QUEUE, payload: {}, attempt: 1, maxAttempts: 3, priority: 0, timeoutMs: null, createdAt: new Date(0), runAt: new Date(0) };
}

function setUp(hook: DeadHook, options: { readonly concurrency?: number; readonly onDeadTimeoutMs?: number } = {}) {
  const clock = new ManualClock();
  const store = new PendingHooksStore();
  const log = new LinesLog();
  const hub = new WorkerEvents();
  const failures: JobOnDeadFailedEvent[] = [];
  hub.on("job.onDeadFailed", (event) => void failures.push(event));
  const resolved = resolveWorkerOptions({ clock, ...options });
  const runner = new DeadHookRunner({
    store: store as unknown as JobStore,
    queue: QUEUE,
    workerId: "w1",
    log,
    options: resolved,
    events: new RunEvents([hub], { queue: QUEUE, workerId: "w1", clock }),
    policy: new StoreRetryPolicy(clock),
    secretFields: [],
    hook,
  });
  return { clock, store, log, failures, runner };
}

describe("DeadHookRunner", () => {
  it("claims a death this worker recorded at once and hands the hook the error as thrown", async () => {
    const calls: [string, Error, DeadJobContext][] = [];
    const { store, runner } = setUp((job, error, ctx) => void calls.push([job.id, error, ctx]));
    runner.start();
    await settle();
    expect(store.claims, "one look at the start").to.have.length(1);
    const thrown = new PermanentError("invoice 7 does not exist");
    store.pending.push(death("7"));
    runner.died(claimed("7"), thrown);
    await settle();
    expect(calls.map(([id, error, ctx]) => [id, error, ctx.attempt, ctx.delivery, ctx.workerId])).to.deep.equal([["7", thrown, 1, 1, "w1"]]);
    expect(store.finished).to.deep.equal([{ id: "7", attempt: 1 }]);
    await runner.stop("now");
  });

  it("hands a death recorded elsewhere a RecordedError with the recorded code and text", async () => {
    const errors: Error[] = [];
    const { store, runner } = setUp((_job, error) => void errors.push(error));
    store.pending.push(death("8", { errorCode: ErrorCode.WorkerDied, lastError: "The worker w0 stopped during attempt 3 of 3\nmore" }));
    runner.start();
    await runner.stop("when-empty");
    expect(errors).to.have.length(1);
    expect(errors[0]!.name).to.equal("RecordedError");
    expect(errorCodeOf(errors[0])).to.equal(ErrorCode.WorkerDied);
    expect(errors[0]!.message).to.equal("The worker w0 stopped during attempt 3 of 3");
    expect(errors[0]!.stack).to.equal("The worker w0 stopped during attempt 3 of 3\nmore");
  });

  it("looks again every 5 s for deaths recorded elsewhere, and claims them for the hook's time plus a margin", async () => {
    const called: string[] = [];
    const { clock, store, runner } = setUp((job) => void called.push(job.id), { onDeadTimeoutMs: 2_000 });
    runner.start();
    await settle();
    store.pending.push(death("9"));
    await clock.advance(DEAD_HOOK_POLL_MS - 1);
    expect(called).to.deep.equal([]);
    await clock.advance(1);
    expect(called).to.deep.equal(["9"]);
    expect(store.claims).to.have.length(2);
    expect(store.leases[0]).to.equal(2_000 + DEAD_HOOK_LEASE_MARGIN_MS);
    await runner.stop("now");
  });

  it("runs at most `concurrency` hooks at once, claiming only for free slots, and runs the rest as slots free up", async () => {
    const releases: (() => void)[] = [];
    let running = 0;
    let most = 0;
    const { store, runner } = setUp(
      async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running -= 1;
      },
      { concurrency: 2 },
    );
    for (let n = 1; n <= 5; n += 1) store.pending.push(death(String(n)));
    runner.start();
    await settle();
    expect(store.claims).to.deep.equal([2]);
    releases.shift()!();
    await settle();
    expect(store.claims).to.deep.equal([2, 1]);
    while (releases.length > 0) {
      releases.shift()!();
      await settle();
    }
    expect(most).to.equal(2);
    expect(store.finished.map((hook) => hook.id)).to.have.members(["1", "2", "3", "4", "5"]);
    await runner.stop("now");
  });

  it("aborts a hook at onDeadTimeoutMs, reports it, and records it done without waiting for it", async () => {
    let reason: unknown;
    const { clock, store, failures, runner } = setUp(
      (_job, _error, ctx) =>
        new Promise<void>(() => {
          ctx.signal.addEventListener("abort", () => {
            reason = ctx.signal.reason;
          });
        }),
      { onDeadTimeoutMs: 1_000 },
    );
    store.pending.push(death("4"));
    runner.start();
    await settle();
    await clock.advance(999);
    expect(failures).to.deep.equal([]);
    await clock.advance(1);
    expect(errorCodeOf(reason)).to.equal(ErrorCode.HookFailed);
    expect(failures.map((event) => [event.jobId, event.timedOut, event.durationMs])).to.deep.equal([["4", true, 1_000]]);
    expect(store.finished).to.deep.equal([{ id: "4", attempt: 1 }]);
    await runner.stop("now");
  });

  it("reports a hook that throws and records it done; the next death's hook still runs", async () => {
    const called: string[] = [];
    const { store, failures, runner } = setUp((job) => {
      called.push(job.id);
      if (job.id === "1") throw new Error("pager down");
    });
    store.pending.push(death("1"), death("2"));
    runner.start();
    await runner.stop("when-empty");
    expect(called).to.deep.equal(["1", "2"]);
    expect(failures.map((event) => [event.jobId, event.error.message, event.timedOut])).to.deep.equal([["1", "pager down", false]]);
    expect(store.finished.map((hook) => hook.id)).to.deep.equal(["1", "2"]);
  });

  it("stopping when empty runs every pending hook first; stopping now claims nothing more", async () => {
    const called: string[] = [];
    const first = setUp((job) => void called.push(job.id), { concurrency: 1 });
    for (let n = 1; n <= 3; n += 1) first.store.pending.push(death(String(n)));
    first.runner.start();
    await first.runner.stop("when-empty");
    expect(called).to.deep.equal(["1", "2", "3"]);

    const second = setUp((job) => void called.push(job.id));
    second.runner.start();
    await settle();
    second.store.pending.push(death("9"));
    await second.runner.stop("now");
    expect(called).to.deep.equal(["1", "2", "3"]);
    expect(second.store.pending).to.have.length(1);
  });

  it("skips the hook of a job deleted before it ran, and records it done", async () => {
    const called: string[] = [];
    const { store, log, runner } = setUp((job) => void called.push(job.id));
    store.pending.push(death("5", { job: undefined }));
    runner.start();
    await runner.stop("when-empty");
    expect(called).to.deep.equal([]);
    expect(store.finished).to.deep.equal([{ id: "5", attempt: 1 }]);
    expect(log.lines.map((line) => line.message)).to.include("Job 5 was deleted before its onDead hook ran; the hook is skipped");
  });

  it("logs a claim the store fails and asks again at the next poll", async () => {
    const called: string[] = [];
    const { clock, store, log, runner } = setUp((job) => void called.push(job.id));
    store.failClaims = 1;
    store.pending.push(death("6"));
    runner.start();
    await settle();
    expect(log.lines.filter((line) => line.level === "warn").map((line) => line.message)).to.deep.equal([
      "Could not look for onDead hooks to run: connection refused; looking again in 5 s",
    ]);
    expect(called).to.deep.equal([]);
    await clock.advance(DEAD_HOOK_POLL_MS);
    expect(called).to.deep.equal(["6"]);
    await runner.stop("now");
  });
});
