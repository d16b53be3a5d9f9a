import { expect } from "chai";
import { MissingPasswordError, SchemaMissingError } from "../../src/errors/database-setup-errors";
import { DatabaseError, InfrastructureError } from "../../src/errors/infrastructure-error";
import { defineJob } from "../../src/job/job-definition";
import type { ClaimedJob } from "../../src/job/job-record";
import type { LogFields, Logger } from "../../src/logging/logger";
import type { CompletedJob, JobAttempt, JobStore } from "../../src/store/job-store";
import { AbstractQueueWorker } from "../../src/worker/abstract-queue-worker";
import { PROGRESS_EVERY_MS } from "../../src/worker/run-progress-log";
import { ManualClock } from "../../src/testing/manual-clock";
import { settle } from "../../src/testing/settle";

const Task = defineJob<{ n: number }>("task");

/** Hands out `backlog` jobs to the first claims, then none; records completions. */
class BacklogStore {
  readonly claims: number[] = [];
  /** Whether each claim also asked for expired leases. */
  readonly takeOvers: boolean[] = [];
  readonly completed: string[] = [];
  /** How many times the run looked for pending onDead hooks. */
  deadHookClaims = 0;
  #next = 1;

  constructor(private backlog: number) {}

  claimBatch(params: { readonly limit: number; readonly takeOverExpired?: boolean }): Promise<readonly ClaimedJob[]> {
    this.claims.push(params.limit);
    this.takeOvers.push(params.takeOverExpired ?? true);
    const count = Math.min(params.limit, this.backlog);
    this.backlog -= count;
    return Promise.resolve(
      Array.from({ length: count }, () => {
        const id = String(this.#next++);
        return {
          id,
          queue: Task.name,
          payload: { n: Number(id) },
          attempt: 1,
          maxAttempts: 3,
          priority: 0,
          timeoutMs: null,
          createdAt: new Date(0),
          runAt: new Date(0),
        };
      }),
    );
  }
  completeJobs(params: { readonly jobs: readonly CompletedJob[] }): Promise<readonly string[]> {
    this.completed.push(...params.jobs.map((job) => job.id));
    return Promise.resolve(params.jobs.map((job) => job.id));
  }
  extendLeases(params: { readonly jobs: readonly JobAttempt[] }): Promise<{ extended: readonly string[]; cancelled: readonly string[] }> {
    return Promise.resolve({ extended: params.jobs.map((job) => job.id), cancelled: [] });
  }
  claimDeadHooks(): Promise<readonly never[]> {
    this.deadHookClaims += 1;
    return Promise.resolve([]);
  }
}

class RecordingLog implements Logger {
  readonly lines: { level: string; message: string; fields?: LogFields }[] = [];
  error(message: string, fields?: LogFields) {
    this.lines.push({ level: "error", message, ...(fields ? { fields } : {}) });
  }
  warn(message: string, fields?: LogFields) {
    this.lines.push({ level: "warn", message, ...(fields ? { fields } : {}) });
  }
  info(message: string, fields?: LogFields) {
    this.lines.push({ level: "info", message, ...(fields ? { fields } : {}) });
  }
  debug(message: string, fields?: LogFields) {
    this.lines.push({ level: "debug", message, ...(fields ? { fields } : {}) });
  }
  child(): Logger {
    return this;
  }
  isLevelEnabled(level: string): boolean {
    return level !== "debug";
  }
}

class TaskWorker extends AbstractQueueWorker<{ n: number }> {
  readonly job = Task;
  protected parse(payload: unknown): { n: number } {
    return payload as { n: number };
  }
  protected async processItem(): Promise<void> {}
}

describe("WorkerRun", () => {
  it("claims concurrency + prefetch at once and refills only when the buffer is down to half the prefetch", async () => {
    const store = new BacklogStore(100);
    const worker = new TaskWorker(store as unknown as JobStore, new RecordingLog(), { concurrency: 2, prefetch: 8, clock: new ManualClock() });
    const summary = await worker.start();
    expect(summary).to.include({ claimed: 100, succeeded: 100, stoppedBecause: "drained" });
    expect(store.claims[0]).to.equal(10);
    expect(Math.min(...store.claims.slice(0, -1)), "every claim but the last that found the queue empty takes at least half the prefetch").to.be.at.least(4);
    expect(store.completed).to.have.length(100);
  });

  it("claims with a run's overrides on top of the constructor's options, and keeps the constructor's for the next run", async () => {
    const store = new BacklogStore(20);
    const worker = new TaskWorker(store as unknown as JobStore, new RecordingLog(), { concurrency: 2, prefetch: 8, clock: new ManualClock() });
    await worker.start({ concurrency: 3, prefetch: 1, maxJobs: 4 });
    expect(store.claims[0], "3 slots + 1 ahead").to.equal(4);
    expect(worker.options).to.include({ concurrency: 2, prefetch: 8 });
    expect(worker.givenOptions).to.include({ concurrency: 2, prefetch: 8 });
    store.claims.length = 0;
    await worker.start({ maxJobs: 10 });
    expect(store.claims[0], "2 slots + 8 ahead").to.equal(10);
  });

  it("checks a run's overrides by the options' own rules, naming the option", async () => {
    const worker = new TaskWorker(new BacklogStore(0) as unknown as JobStore, new RecordingLog(), { clock: new ManualClock() });
    let thrown: unknown;
    try {
      await worker.start({ concurrency: 0 });
    } catch (error) {
      thrown = error;
    }
    expect((thrown as Error).message).to.equal("Invalid option `concurrency`: must be an integer from 1 to 1000, got 0");
  });

  it("looks for pending onDead hooks once per drain, however many jobs succeed", async () => {
    const store = new BacklogStore(1_000);
    const summary = await new TaskWorker(store as unknown as JobStore, new RecordingLog(), { concurrency: 4, clock: new ManualClock() }).start();
    expect(summary).to.include({ succeeded: 1_000 });
    expect(store.deadHookClaims).to.equal(1);
  });

  it("writes an info summary of a busy run every 30 s, and nothing when nothing happened", async () => {
    const clock = new ManualClock();
    const log = new RecordingLog();
    const store = new BacklogStore(3);
    const stop = new AbortController();
    const run = new TaskWorker(store as unknown as JobStore, log, { concurrency: 2, clock }).start({
      mode: "loop",
      signal: stop.signal,
      pollIntervalMs: 1_000,
    });
    await settle();
    await clock.advance(PROGRESS_EVERY_MS);
    const summaries = (): string[] => log.lines.filter((line) => line.level === "info" && line.message.startsWith("Worked on")).map((line) => line.message);
    expect(summaries()).to.have.length(1);
    expect(summaries()[0]).to.contain("Worked on task: 3 succeeded, 0 retried, 0 dead, 0 lease lost, 0 cancelled in the last 30 s");
    await clock.advance(PROGRESS_EVERY_MS);
    expect(summaries(), "an idle half minute writes no summary").to.have.length(1);
    expect(
      log.lines.filter((line) => line.level === "debug"),
      "per-job lines are skipped when debug is off",
    ).to.deep.equal([]);
    stop.abort();
    await clock.advance(1);
    expect(await run).to.include({ claimed: 3, succeeded: 3, stoppedBecause: "signal" });
  });

  it("counts a claim's lease from the try that got through, not from the first one an outage swallowed", async () => {
    const clock = new ManualClock();
    const store = new BacklogStore(1);
    let failFirst!: (error: Error) => void;
    const claim = store.claimBatch.bind(store);
    let tries = 0;
    store.claimBatch = (params) => {
      tries += 1;
      return tries === 1 ? new Promise((_, reject) => (failFirst = reject)) : claim(params);
    };
    const run = new TaskWorker(store as unknown as JobStore, new RecordingLog(), { concurrency: 1, leaseMs: 1_000, clock }).start();
    await settle();
    // The first try hangs through an outage longer than the lease, then fails; the retry takes the job.
    await clock.advance(2_000);
    failFirst(new InfrastructureError("connection timeout"));
    await clock.advance(200);
    expect(await run).to.include({ claimed: 1, succeeded: 1, leaseLost: 0 });
    expect(store.completed).to.deep.equal(["1"]);
  });

  it("stops with config on a setup error (a schema not migrated, a missing password) and infrastructure on any other, logging the error", async () => {
    const cases = [
      { error: new SchemaMissingError("claimBatch failed: … — run `stint migrate`", { schema: "stint" }), stoppedBecause: "config" },
      { error: new MissingPasswordError("claimBatch failed: PostgreSQL asked for a password"), stoppedBecause: "config" },
      { error: new DatabaseError("claimBatch failed: permission denied for table jobs", { sqlState: "42501" }), stoppedBecause: "infrastructure" },
    ];
    for (const { error, stoppedBecause } of cases) {
      const store = new BacklogStore(0);
      store.claimBatch = () => Promise.reject(error);
      const log = new RecordingLog();
      const summary = await new TaskWorker(store as unknown as JobStore, log, { clock: new ManualClock() }).start({ mode: "loop" });
      expect(summary, error.message).to.include({ stoppedBecause, error: error.message, claimed: 0 });
      expect(log.lines.filter((line) => line.level === "error").map((line) => line.message)).to.deep.equal([
        `Stopped worker for task (${stoppedBecause}): 0 claimed, 0 succeeded, 0 retried, 0 dead, 0 lease lost, 0 cancelled, 0 not recorded in 0 ms: ${error.message}`,
      ]);
    }
  });

  it("looks for expired leases on the first claim, then at most once a second", async () => {
    const clock = new ManualClock();
    const store = new BacklogStore(0);
    const stop = new AbortController();
    const run = new TaskWorker(store as unknown as JobStore, new RecordingLog(), { concurrency: 2, clock }).start({
      mode: "loop",
      signal: stop.signal,
      pollIntervalMs: 200,
    });
    await settle();
    expect(store.takeOvers, "the first claim looks").to.deep.equal([true]);
    for (let elapsed = 0; elapsed < 3_000; elapsed += 50) await clock.advance(50);
    stop.abort();
    await clock.advance(1);
    await run;
    const looks = store.takeOvers.filter(Boolean).length;
    expect(store.takeOvers.length, "the idle worker polled many times").to.be.at.least(15);
    expect(looks, "about once a second over 3 s of polls every 200 ms").to.be.within(3, 4);
  });
});
