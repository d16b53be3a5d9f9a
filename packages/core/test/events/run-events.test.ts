import { expect } from "chai";
import { RunEvents } from "../../src/events/run-events";
import { WorkerEvents } from "../../src/events/worker-events";
import { CancelledError, ParseError, PermanentError } from "../../src/errors/job-errors";
import { ErrorCode } from "../../src/errors/error-codes";
import { errorCodeOf } from "../../src/errors/stint-error";
import { logLines } from "../../src/events/log-lines";
import type { Logger } from "../../src/logging/logger";
import type { ClaimedJob } from "../../src/job/job-record";
import type { Clock } from "../../src/time/clock";

/** A clock that counts its reads: an event is built only when the clock is read. */
class CountingClock implements Clock {
  reads = 0;
  now(): number {
    this.reads += 1;
    return 1_700_000_001_000;
  }
  sleep(): Promise<void> {
    return Promise.resolve();
  }
}

const job: ClaimedJob = {
  id: "7",
  queue: "q",
  payload: { n: 1 },
  attempt: 2,
  maxAttempts: 3,
  priority: 0,
  timeoutMs: null,
  createdAt: new Date(0),
  runAt: new Date(1_700_000_000_000),
};

function setUp() {
  const clock = new CountingClock();
  const hub = new WorkerEvents();
  const events = new RunEvents([new WorkerEvents(), hub], { queue: "q", workerId: "w1", clock });
  return { clock, hub, events };
}

describe("RunEvents", () => {
  it("builds no event nobody listens to", () => {
    const { clock, events } = setUp();
    events.jobStarted(job);
    events.jobOutcome(job, { kind: "succeeded", result: 1, resultJson: "1", inTransaction: false, durationMs: 3 }, "applied");
    events.jobOutcome(job, { kind: "retry", delayMs: 10, error: new Error("x"), durationMs: 3 }, "applied");
    events.queueDrained();
    expect(clock.reads).to.equal(0);
  });

  it("carries the job's id, queue, attempt, worker, timestamps and the wait before the start", () => {
    const { hub, events } = setUp();
    const started: object[] = [];
    hub.on("job.started", (event) => started.push(event));
    events.jobStarted(job);
    expect(started).to.deep.equal([
      {
        jobId: "7",
        queue: "q",
        attempt: 2,
        maxAttempts: 3,
        workerId: "w1",
        at: new Date(1_700_000_001_000),
        runAt: new Date(1_700_000_000_000),
        payload: { n: 1 },
        waitMs: 1_000,
      },
    ]);
  });

  it("emits job.failed with willRetry and retryAt for a retry, and job.failed then job.dead for a dead job", () => {
    const { hub, events } = setUp();
    const seen: string[] = [];
    hub.on("job.failed", (event) => seen.push(`failed retry=${event.willRetry} at=${event.retryAt?.getTime() ?? null} ${event.errorCode}`));
    hub.on("job.dead", (event) => seen.push(`dead ${event.errorCode} ${event.error.message}`));
    events.jobOutcome(job, { kind: "retry", delayMs: 500, error: new Error("flaky"), durationMs: 1 }, "applied");
    events.jobOutcome(job, { kind: "dead", error: new PermanentError("nope"), durationMs: 1 }, "applied");
    events.jobOutcome(job, { kind: "dead", error: new ParseError("bad payload"), durationMs: 0 }, "applied");
    expect(seen).to.deep.equal([
      "failed retry=true at=1700000001500 STINT_UNKNOWN",
      "failed retry=false at=null STINT_PERMANENT",
      "dead STINT_PERMANENT nope",
      "failed retry=false at=null STINT_PARSE",
      "dead STINT_PARSE bad payload",
    ]);
  });

  it("reports a discarded outcome as job.leaseLost and an unwritten one as job.writeFailed, never as its outcome", () => {
    const { hub, events } = setUp();
    const seen: string[] = [];
    hub.on("job.succeeded", () => seen.push("succeeded"));
    hub.on("job.leaseLost", (event) => seen.push(`leaseLost ${event.discarded} started=${event.started}`));
    hub.on("job.writeFailed", (event) => seen.push(`writeFailed ${event.outcome}`));
    const success = { kind: "succeeded", result: 1, resultJson: "1", inTransaction: false, durationMs: 3 } as const;
    events.jobOutcome(job, success, "fence-missed");
    events.jobOutcome(job, success, "failed");
    events.jobOutcome(job, { kind: "lease-lost", error: new Error("lapsed"), started: false, durationMs: 0 }, "applied");
    expect(seen).to.deep.equal(["leaseLost succeeded started=true", "writeFailed succeeded", "leaseLost null started=false"]);
  });

  it("reports a cancelled attempt, stopped or with its outcome discarded, as job.cancelled and never as a lost lease, and logs it truthfully", () => {
    const { hub, events } = setUp();
    const lines: string[] = [];
    const log: Logger = {
      error: (message) => lines.push(`error ${message}`),
      warn: (message) => lines.push(`warn ${message}`),
      info: (message) => lines.push(`info ${message}`),
      debug: () => undefined,
      child: () => log,
    };
    const logged = logLines(log, []);
    const seen: string[] = [];
    for (const name of ["job.cancelled", "job.leaseLost", "job.succeeded", "job.failed"] as const) {
      hub.on(name, (event) => seen.push(`${name} ${"discarded" in event ? event.discarded : ""} ${"started" in event ? event.started : ""}`));
    }
    const both = new RunEvents([hub, logged], { queue: "q", workerId: "w1", clock: new CountingClock() });
    const cancel = new CancelledError("job 7 (attempt 2) was cancelled while it ran; its handler must stop");
    both.jobOutcome(job, { kind: "cancelled", error: cancel, started: true, durationMs: 120 }, "cancelled");
    both.jobOutcome(job, { kind: "succeeded", result: 1, resultJson: "1", inTransaction: false, durationMs: 3 }, "cancelled");
    both.jobOutcome(job, { kind: "cancelled", error: cancel, started: false, durationMs: 0 }, "cancelled");
    expect(seen).to.deep.equal(["job.cancelled null true", "job.cancelled succeeded true", "job.cancelled null false"]);
    expect(lines).to.deep.equal([
      "info Job 7 (q, attempt 2/3) was cancelled while it ran; its handler was told to stop",
      "info Job 7 (q, attempt 2/3) was cancelled while it ran; its succeeded outcome is discarded",
      "info Job 7 (q, attempt 2/3) was cancelled before it started; its handler did not run",
    ]);
    const errors: unknown[] = [];
    hub.on("job.cancelled", (event) => errors.push(errorCodeOf(event.error)));
    events.jobOutcome(job, { kind: "retry", delayMs: 0, error: new Error("x"), durationMs: 1 }, "cancelled");
    expect(errors).to.deep.equal([ErrorCode.Cancelled]);
  });
});
