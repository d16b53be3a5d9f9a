import { expect } from "chai";
import { defineJob, ErrorCode, errorCodeOf, type JobCancelledEvent, type Logger, type RunSummary } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { PostgresWakeupSource } from "../../src";
import { schemaPerTest, ScriptedWorker, deferred } from "./scripted-worker";

/** One attempt only: had the cancel counted as a lost lease, the job would be dead and `onDead` called. */
const LastAttemptJob = defineJob<{ n: number }>("last-attempt", { maxAttempts: 1 });

/** A handler that would run for a minute unless its signal stops it. */
const A_MINUTE_MS = 60_000;

describe("a running job cancelled by an operator (PostgreSQL)", () => {
  const { schema } = schemaPerTest();

  /** Every line the worker logs, as "level message". */
  function capturingLogger(): { readonly log: Logger; readonly lines: string[] } {
    const lines: string[] = [];
    const log: Logger = {
      error: (message) => lines.push(`error ${message}`),
      warn: (message) => lines.push(`warn ${message}`),
      info: (message) => lines.push(`info ${message}`),
      debug: (message) => lines.push(`debug ${message}`),
      child: () => log,
    };
    return { log, lines };
  }

  /**
   * Runs a worker (loop mode, `wakeups` when given) whose handler waits a
   * minute or for its signal, cancels the job once the handler started,
   * and returns when the signal aborted (measured from the cancel's
   * commit), why, and what the run and the database show after it.
   */
  async function cancelWhileRunning(options: { readonly leaseMs?: number; readonly wakeups?: PostgresWakeupSource }) {
    const { store } = schema();
    const { id } = await store.enqueue(buildNewJob(LastAttemptJob, { n: 1 }));
    const started = deferred();
    const stopped = deferred<{ readonly reason: unknown; readonly at: number }>();
    const deaths: string[] = [];
    const { log, lines } = capturingLogger();
    const worker = new ScriptedWorker(
      store,
      {
        job: LastAttemptJob,
        log,
        process: async (_item, ctx) => {
          started.resolve();
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, A_MINUTE_MS);
            ctx.signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
          });
          stopped.resolve({ reason: ctx.signal.reason, at: Date.now() });
          throw ctx.signal.reason;
        },
        onDead: (job) => void deaths.push(job.id),
      },
      options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs },
    );
    const cancelled: JobCancelledEvent[] = [];
    worker.events.on("job.cancelled", (event) => cancelled.push(event));
    const stop = new AbortController();
    const run = worker.start({
      mode: "loop",
      signal: stop.signal,
      pollIntervalMs: 100,
      ...(options.wakeups === undefined ? {} : { wakeups: options.wakeups }),
    });
    let summary: RunSummary | undefined;
    try {
      await started.promise;
      expect(await store.cancelJob({ id })).to.equal(true);
      const cancelledAt = Date.now();
      const afterCancel = await store.getJob({ id });
      const { reason, at } = await stopped.promise;
      stop.abort();
      summary = await run;
      return {
        id,
        worker,
        reason,
        stoppedAfterMs: at - cancelledAt,
        summary,
        afterCancel,
        now: await store.getJob({ id }),
        history: await store.listAttempts({ jobId: id }),
        deaths,
        lines,
        cancelled,
      };
    } finally {
      stop.abort();
      await run;
    }
  }

  it("aborts the handler's signal within a second under the default 60 s lease, with the cancel as its reason (LISTEN/NOTIFY)", async () => {
    const { connectionString, schema: name } = schema();
    const wakeups = new PostgresWakeupSource({ connectionString, schema: name, onError: () => undefined });
    try {
      const result = await cancelWhileRunning({ wakeups });
      expect(result.worker.options.leaseMs, "the default lease").to.equal(60_000);
      expect(result.stoppedAfterMs, "from the cancel's commit to the abort").to.be.below(1_000);
      expect(errorCodeOf(result.reason)).to.equal(ErrorCode.Cancelled);
      expect((result.reason as Error).message).to.equal(`job ${result.id} (attempt 1) was cancelled while it ran; its handler must stop`);
      expectNothingAfterTheCancel(result);
    } finally {
      await wakeups.close();
    }
  });

  it("stops the handler at its next heartbeat, with the cancel as its reason, when no notification arrives", async () => {
    const leaseMs = 1_200;
    const result = await cancelWhileRunning({ leaseMs });
    const { heartbeatIntervalMs } = result.worker.options;
    expect(result.stoppedAfterMs, "within a heartbeat interval and its answer").to.be.below(heartbeatIntervalMs + 500);
    expect(errorCodeOf(result.reason)).to.equal(ErrorCode.Cancelled);
    expectNothingAfterTheCancel(result);
  });

  /** The attempt wrote nothing after the cancel, counted and logged as cancelled (never as a lost lease), and no onDead ran. */
  function expectNothingAfterTheCancel(result: Awaited<ReturnType<typeof cancelWhileRunning>>): void {
    expect(result.now, "the job as the cancel left it").to.deep.equal(result.afterCancel);
    expect(result.now).to.include({ state: "cancelled", errorCode: null });
    expect(result.history.map((attempt) => [attempt.attempt, attempt.outcome, attempt.error?.code])).to.deep.equal([[1, "cancelled", ErrorCode.Cancelled]]);
    expect(result.summary).to.include({ claimed: 1, cancelled: 1, leaseLost: 0, retried: 0, dead: 0, succeeded: 0, writeFailed: 0 });
    expect(result.deaths, "onDead").to.deep.equal([]);
    expect(result.cancelled.map((event) => ({ jobId: event.jobId, started: event.started, discarded: event.discarded }))).to.deep.equal([
      { jobId: result.id, started: true, discarded: null },
    ]);
    expect(result.lines).to.include(`info Job ${result.id} (last-attempt, attempt 1/1) was cancelled while it ran; its handler was told to stop`);
    expect(result.lines.join("\n")).to.not.match(/Another worker owns|lost the lease/);
  }
});
