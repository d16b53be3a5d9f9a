import { expect } from "chai";
import { PayloadError } from "../../src/errors/config-errors";
import { RunEvents } from "../../src/events/run-events";
import { WorkerEvents } from "../../src/events/worker-events";
import type { ClaimedJob } from "../../src/job/job-record";
import type { Logger } from "../../src/logging/logger";
import type { JobStore, ProgressWrite } from "../../src/store/job-store";
import { ProgressReporter } from "../../src/worker/progress-reporter";
import { ManualClock } from "../../src/testing/manual-clock";

const job: ClaimedJob = {
  id: "812",
  queue: "import",
  payload: {},
  attempt: 2,
  maxAttempts: 3,
  priority: 0,
  timeoutMs: null,
  createdAt: new Date(0),
  runAt: new Date(0),
};

/** A store whose progress writes wait until the test settles them, one at a time. */
class HeldWrites {
  readonly sent: ProgressWrite[] = [];
  readonly #pending: { resolve: (applied: boolean) => void; reject: (error: Error) => void }[] = [];

  readonly store = {
    writeProgress: (params: ProgressWrite) => {
      this.sent.push(params);
      return new Promise<boolean>((resolve, reject) => this.#pending.push({ resolve, reject }));
    },
  } as unknown as JobStore;

  get inFlight(): number {
    return this.#pending.length;
  }

  async settle(outcome: "applied" | Error = "applied"): Promise<void> {
    const next = this.#pending.shift();
    if (next === undefined) throw new Error("no write in flight");
    if (outcome === "applied") next.resolve(true);
    else next.reject(outcome);
    for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
  }
}

function setUp() {
  const writes = new HeldWrites();
  const debug: string[] = [];
  const log = { debug: (line: string) => debug.push(line), child: () => log } as unknown as Logger;
  const hub = new WorkerEvents();
  const events = new RunEvents([hub], { queue: "import", workerId: "w1", clock: new ManualClock() });
  const reporter = new ProgressReporter({ store: writes.store, workerId: "w1", job, log, events });
  return { writes, debug, hub, reporter };
}

describe("ProgressReporter", () => {
  it("sends the first value at once, fenced on the attempt", () => {
    const { writes, reporter } = setUp();
    reporter.report(0.1);
    expect(writes.sent).to.deep.equal([{ workerId: "w1", job: { id: "812", attempt: 2 }, progressJson: "0.1" }]);
  });

  it("keeps one write in flight and sends only the latest value after it", async () => {
    const { writes, reporter } = setUp();
    reporter.report(1);
    reporter.report(2);
    reporter.report(3);
    expect(writes.inFlight).to.equal(1);
    await writes.settle();
    expect(writes.sent.map((write) => write.progressJson)).to.deep.equal(["1", "3"]);
    await writes.settle();
    expect(writes.inFlight).to.equal(0);
  });

  it("logs a failed write at debug, drops it, and tries again with the next value", async () => {
    const { writes, debug, reporter } = setUp();
    reporter.report({ done: 1 });
    await writes.settle(new Error("connection reset"));
    expect(debug).to.have.length(1);
    expect(debug[0]).to.include("connection reset");
    expect(writes.inFlight).to.equal(0);
    reporter.report({ done: 2 });
    expect(writes.sent.map((write) => write.progressJson)).to.deep.equal(['{"done":1}', '{"done":2}']);
  });

  it("flushes: resolves only once the last value reported is written", async () => {
    const { writes, reporter } = setUp();
    reporter.report(1);
    reporter.report(2);
    let flushed = false;
    const flush = reporter.flush().then(() => (flushed = true));
    await writes.settle();
    expect(flushed).to.equal(false);
    await writes.settle();
    await flush;
    expect(writes.sent.map((write) => write.progressJson)).to.deep.equal(["1", "2"]);
  });

  it("emits job.progress for each value and refuses a value that is not JSON or too large", () => {
    const { hub, reporter, writes } = setUp();
    const seen: unknown[] = [];
    hub.on("job.progress", (event) => seen.push(event.progress));
    reporter.report({ done: 4, of: 10 });
    expect(seen).to.deep.equal([{ done: 4, of: 10 }]);
    expect(() => reporter.report(Number.NaN)).to.throw(PayloadError, "progress");
    expect(() => reporter.report("x".repeat(5_000))).to.throw(PayloadError, "MAX_PROGRESS_BYTES");
    expect(writes.sent).to.have.length(1);
  });
});
