import { RunEvents } from "../../src/events/run-events";
import { expect } from "chai";
import { ErrorCode } from "../../src/errors/error-codes";
import { InfrastructureError } from "../../src/errors/infrastructure-error";
import { describeError } from "../../src/errors/coerce-error";
import { MAX_ERROR_TEXT } from "../../src/limits";
import { retryAfter, snooze } from "../../src/errors/control-flow";
import { PermanentError } from "../../src/errors/job-errors";
import type { ClaimedJob } from "../../src/job/job-record";
import type { Logger } from "../../src/logging/logger";
import type { CompletedJob, DeadJob, JobAttempt, JobFailure, JobStore, RetryingJob } from "../../src/store/job-store";
import { AttemptExecutor, type JobHooks } from "../../src/worker/attempt-executor";
import type { AttemptResult } from "../../src/worker/attempt-executor";
import type { FailureDecision } from "../../src/worker/job-context";
import { LeaseKeeper } from "../../src/worker/lease-keeper";
import { OutcomeRecorder } from "../../src/worker/outcome-recorder";
import { StoreRetryPolicy } from "../../src/worker/store-retry-policy";
import { resolveWorkerOptions } from "../../src/worker/worker-options";
import { ManualClock } from "../../src/testing/manual-clock";
import { settle } from "../../src/testing/settle";

const QUIET: Logger = { error() {}, warn() {}, info() {}, debug() {}, child: () => QUIET };
const LEASE_MS = 3_000;

type Write =
  | { readonly op: "complete"; readonly job: CompletedJob }
  | { readonly op: "retry"; readonly job: JobAttempt; readonly delayMs: number; readonly failure: JobFailure | null; readonly spendAttempt: boolean }
  | { readonly op: "dead"; readonly job: JobAttempt; readonly failure: JobFailure };

/** The store calls an attempt makes after its claim, recorded; `refuse` makes the next outcome write throw. */
class OutcomeStore {
  readonly writes: Write[] = [];
  refuse: Error[] = [];

  extendLeases(params: { readonly jobs: readonly JobAttempt[] }): Promise<{ extended: readonly string[]; cancelled: readonly string[] }> {
    return Promise.resolve({ extended: params.jobs.map((job) => job.id), cancelled: [] });
  }
  completeJobs(params: { readonly jobs: readonly CompletedJob[] }): Promise<readonly string[]> {
    for (const job of params.jobs) this.writes.push({ op: "complete", job });
    return Promise.resolve(params.jobs.map((job) => job.id));
  }
  scheduleRetries(params: { readonly jobs: readonly RetryingJob[] }): Promise<readonly string[]> {
    return this.#write(params.jobs.map(({ delayMs, failure, spendAttempt, ...job }) => ({ op: "retry", job, delayMs, failure, spendAttempt })));
  }
  markJobsDead(params: { readonly jobs: readonly DeadJob[] }): Promise<readonly string[]> {
    return this.#write(params.jobs.map(({ failure, ...job }) => ({ op: "dead", job, failure })));
  }
  completeInTransaction(_params: unknown, work: (trx: unknown) => Promise<unknown>): Promise<{ applied: boolean; value: unknown }> {
    return work("trx").then((value) => ({ applied: true, value }));
  }
  #write(writes: readonly Write[]): Promise<readonly string[]> {
    const refusal = this.refuse.shift();
    if (refusal !== undefined) return Promise.reject(refusal);
    this.writes.push(...writes);
    return Promise.resolve(writes.map((write) => write.job.id));
  }
}

function job(overrides: Partial<ClaimedJob> = {}): ClaimedJob {
  return {
    id: "812",
    queue: "send-invoice",
    payload: { invoiceId: 812 },
    attempt: 1,
    maxAttempts: 3,
    priority: 0,
    timeoutMs: null,
    createdAt: new Date(0),
    runAt: new Date(0),
    ...overrides,
  };
}

function setUp(hooks: Partial<JobHooks<{ invoiceId: number }>>) {
  const clock = new ManualClock();
  const store = new OutcomeStore();
  const options = resolveWorkerOptions({ leaseMs: LEASE_MS, clock });
  const asStore = store as unknown as JobStore;
  const leases = new LeaseKeeper(asStore, options, "w1", QUIET);
  const policy = new StoreRetryPolicy(clock);
  const events = new RunEvents([], { queue: "send-invoice", workerId: "w1", clock });
  const recorder = new OutcomeRecorder({ store: asStore, workerId: "w1", secretFields: [], policy, leaseMs: LEASE_MS, log: QUIET, events, writes: leases });
  const executor = new AttemptExecutor<{ invoiceId: number }>({
    events,
    store: asStore,
    workerId: "w1",
    log: QUIET,
    options,
    leases,
    recorder,
    hooks: {
      parse: (payload) => payload as { invoiceId: number },
      process: async () => "sent",
      processBatch: async () => undefined,
      decide: (): FailureDecision => ({ action: "retry", delayMs: 1_000 }),
      secretFields: [],
      ...hooks,
    },
  });
  leases.start();
  /** Claims `claimed` now and runs it, advancing the fake clock as it waits. */
  const run = async (claimed: ClaimedJob = job()): Promise<AttemptResult> => {
    const attempt = executor.claimed(claimed, clock.now());
    const result = executor.run(attempt);
    await settle();
    return result;
  };
  return { clock, store, leases, executor, run };
}

describe("AttemptExecutor: the hooks' answer becomes one outcome, written once", () => {
  it("completes a job whose handler resolves, with its result", async () => {
    const { store, run } = setUp({});
    const result = await run();
    expect(result.outcome).to.include({ kind: "succeeded", resultJson: '"sent"', inTransaction: false });
    expect(result.written).to.equal("applied");
    expect(store.writes).to.deep.equal([{ op: "complete", job: { id: "812", attempt: 1, resultJson: '"sent"', durationMs: 0 } }]);
  });

  it("sends a payload that fails parse to dead with STINT_PARSE, never calling the handler", async () => {
    let called = false;
    const { store, run } = setUp({
      parse: () => {
        throw new Error("invoiceId must be a number");
      },
      process: async () => {
        called = true;
      },
    });
    const result = await run();
    expect(result.outcome.kind).to.equal("dead");
    expect(called).to.equal(false);
    expect(store.writes[0]).to.deep.include({ op: "dead" });
    expect((store.writes[0] as { failure: JobFailure }).failure).to.include({ code: ErrorCode.Parse });
    expect((store.writes[0] as { failure: JobFailure }).failure.message).to.contain("invalid payload: invoiceId must be a number");
  });

  it("retries a failure after the delay handleFailure chose, spending the attempt", async () => {
    const { store, run } = setUp({
      process: async () => {
        throw new Error("503 from the mail service");
      },
    });
    const result = await run();
    expect(result.outcome).to.include({ kind: "retry", delayMs: 1_000 });
    expect(store.writes[0]).to.deep.include({ op: "retry", delayMs: 1_000, spendAttempt: true });
  });

  it("sends a failure to dead when handleFailure says so", async () => {
    const { store, run } = setUp({
      process: async () => {
        throw new PermanentError("no such invoice");
      },
      decide: () => ({ action: "dead" }),
    });
    expect((await run()).outcome.kind).to.equal("dead");
    expect((store.writes[0] as { failure: JobFailure }).failure).to.include({ code: ErrorCode.Permanent });
  });

  it("snoozes without spending the attempt", async () => {
    const { store, run } = setUp({
      process: async () => {
        throw snooze(60_000);
      },
    });
    expect((await run()).outcome).to.include({ kind: "snoozed", delayMs: 60_000 });
    expect(store.writes[0]).to.deep.include({ op: "retry", delayMs: 60_000, failure: null, spendAttempt: false });
  });

  it("aborts the handler at the job's timeout and lets handleFailure decide", async () => {
    let reason: unknown;
    const { clock, store, executor } = setUp({
      process: (_item, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject((reason = ctx.signal.reason)))),
    });
    const result = executor.run(executor.claimed(job({ timeoutMs: 500 }), clock.now()));
    await clock.advance(500);
    expect((await result).outcome.kind).to.equal("retry");
    expect((reason as { code?: string }).code).to.equal(ErrorCode.Timeout);
    expect((store.writes[0] as { failure: JobFailure }).failure).to.include({ code: ErrorCode.Timeout });
  });

  it("stops a handler whose lease lapses and hands the job back as failed, due now", async () => {
    const { clock, store, executor, leases } = setUp({ process: () => new Promise(() => undefined) });
    const result = executor.run(executor.claimed(job(), clock.now()));
    clock.jump(LEASE_MS);
    leases.expireLapsed();
    const { outcome, written } = await result;
    expect(outcome).to.include({ kind: "lease-lost", started: true });
    expect(written).to.equal("applied");
    expect(store.writes[0]).to.deep.include({ op: "retry", delayMs: 0, spendAttempt: true });
    expect((store.writes[0] as { failure: JobFailure }).failure).to.include({ code: ErrorCode.LeaseLost });
  });

  it("gives a job whose lease lapsed before it started back without spending the attempt", async () => {
    let called = false;
    const { clock, store, executor } = setUp({
      process: async () => {
        called = true;
      },
    });
    const attempt = executor.claimed(job(), clock.now());
    clock.jump(LEASE_MS);
    const { outcome } = await executor.run(attempt);
    expect(outcome).to.include({ kind: "lease-lost", started: false });
    expect(called).to.equal(false);
    expect(store.writes[0]).to.deep.include({ op: "retry", failure: null, spendAttempt: false });
  });

  it("treats a handleFailure that throws or answers an unusable delay as dead, naming the hook", async () => {
    for (const decide of [
      () => {
        throw new Error("alerting is down");
      },
      () => ({ action: "retry", delayMs: Number.NaN }) as FailureDecision,
    ]) {
      const { store, run } = setUp({
        process: async () => {
          throw new Error("boom");
        },
        decide,
      });
      expect((await run()).outcome.kind).to.equal("dead");
      expect((store.writes[0] as { failure: JobFailure }).failure).to.include({ code: ErrorCode.HookFailed });
      expect((store.writes[0] as { failure: JobFailure }).failure.message).to.contain("boom");
    }
  });

  it("keeps a job completed in ctx.transaction succeeded even when the handler throws afterwards", async () => {
    const { store, run } = setUp({
      process: async (_item, ctx) => {
        await ctx.transaction(async () => "written");
        throw new Error("after the commit");
      },
    });
    const result = await run();
    expect(result.outcome).to.include({ kind: "succeeded", inTransaction: true });
    expect(store.writes).to.deep.equal([]);
  });

  it("records the store's own refusal of an outcome write as the attempt's error instead of letting it lapse", async () => {
    const { store, run } = setUp({
      process: async () => {
        throw new Error("boom");
      },
    });
    store.refuse = [Object.assign(new Error("invalid byte sequence for encoding UTF8"), { code: "STINT_DATABASE" })];
    const result = await run();
    expect(result.written).to.equal("applied");
    expect(store.writes[0]).to.deep.include({ op: "retry", spendAttempt: true });
    expect((store.writes[0] as { failure: JobFailure }).failure.message)
      .to.contain("the outcome could not be recorded")
      .and.contain("invalid byte sequence");
  });

  it("writes the retries of attempts that end together in one statement, and a refused one alone records the store's reason", async () => {
    const { store, run } = setUp({
      process: async (item) => {
        throw new Error(`boom ${item.invoiceId}`);
      },
    });
    const refusal = Object.assign(new Error("invalid byte sequence for encoding UTF8"), { code: "STINT_DATABASE" });
    store.refuse = [refusal, refusal]; // the batch, then the first row on its own
    const results = await Promise.all([run(job({ id: "812" })), run(job({ id: "813", payload: { invoiceId: 813 } }))]);
    expect(results.map((result) => result.written)).to.deep.equal(["applied", "applied"]);
    const retries = store.writes as { readonly job: JobAttempt; readonly failure: JobFailure }[];
    expect(retries.map((write) => write.job.id)).to.deep.equal(["813", "812"]);
    expect(retries[0]!.failure.message).to.contain("boom 813").and.not.contain("could not be recorded");
    expect(retries[1]!.failure.message).to.contain("the outcome could not be recorded").and.contain("invalid byte sequence");
  });

  it("reports a write that fails through the whole lease as failed, not as a lost lease", async () => {
    const { clock, store, executor } = setUp({
      process: async () => {
        throw new Error("boom");
      },
    });
    store.refuse = Array.from({ length: 100 }, () => new InfrastructureError("connection reset"));
    const result = executor.run(executor.claimed(job(), clock.now()));
    await clock.advance(LEASE_MS + 6_000);
    expect((await result).written).to.equal("failed");
  });
});

describe("control-flow helpers and stored error text", () => {
  it("refuses NaN, negative and infinite delays where they are made", () => {
    for (const delay of [Number.NaN, -1, Number.POSITIVE_INFINITY]) {
      expect(() => snooze(delay), `snooze(${delay})`).to.throw(/delayMs/);
      expect(() => retryAfter(delay), `retryAfter(${delay})`).to.throw(/retryAfterMs/);
    }
    expect(snooze(1.4).delayMs).to.equal(1);
  });

  it("makes error text storable: NUL escaped, unpaired surrogates replaced, also across the length cap", () => {
    const text = describeError(new Error(`bad byte \u0000 and half a pair \uD83D here`));
    expect(text).to.contain("bad byte \\u0000 and half a pair \uFFFD here");
    const long = describeError(new Error("x".repeat(MAX_ERROR_TEXT - 21 - "Error: ".length) + "😀".repeat(10)));
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(long)).to.equal(false);
  });
});
