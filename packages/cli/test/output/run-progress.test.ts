import { expect } from "chai";
import type { QueueCounts } from "@stint/core";
import { startRunProgress } from "../../src/output/run-progress";
import { CapturedStream } from "../helpers/run-stint";

/** A store whose counts the test sets, and that counts how often it was asked. */
class CountsStub {
  calls = 0;
  succeeded = 0;
  dead = 0;
  due = 0;

  async countByQueue(): Promise<readonly QueueCounts[]> {
    this.calls += 1;
    const counts = { blocked: 0, queued: this.due, running: 0, failed: 0, succeeded: this.succeeded, dead: this.dead, cancelled: 0 };
    return [{ queue: "mail", counts, due: this.due, oldestDueAgeMs: null }];
  }
}

describe("startRunProgress", () => {
  it("counts from the start: done and failed since, what is still due, and the rate", async () => {
    const store = new CountsStub();
    store.succeeded = 500;
    store.dead = 7;
    store.due = 100;
    let now = 0;
    const stream = new CapturedStream(true);
    const progress = await startRunProgress({ queues: ["mail"], store, stream, intervalMs: 60_000, now: () => now });
    store.succeeded = 560;
    store.dead = 9;
    store.due = 38;
    now = 4_000;
    await progress!.stop();
    expect(stream.text).to.include("\r\x1b[Krun mail: 0/100 jobs done (0%), 0 failed, 100 remaining, 0.0/s");
    expect(stream.text).to.match(/\r\x1b\[Krun mail: 60\/100 jobs done \(60%\), 2 failed, 38 remaining, 15\/s\n$/);
  });

  it("keeps its line below the log lines written meanwhile", async () => {
    const store = new CountsStub();
    store.due = 3;
    const stream = new CapturedStream(true);
    const progress = await startRunProgress({ queues: ["mail"], store, stream, intervalMs: 60_000 });
    stream.write('{"level":"info","message":"Completed job 1"}\n');
    store.succeeded = 1;
    store.due = 2;
    await progress!.stop();
    const line = (done: number, remaining: number): string =>
      `run mail: ${done}/3 jobs done (${Math.floor((done / 3) * 100)}%), 0 failed, ${remaining} remaining`;
    expect(stream.text).to.include(`${line(0, 3)}, 0.0/s\r\x1b[K{"level":"info","message":"Completed job 1"}\n\r\x1b[K${line(0, 3)}, 0.0/s`);
    expect(stream.text).to.include(`\r\x1b[K${line(1, 2)}`);
    expect(Object.prototype.hasOwnProperty.call(stream, "write"), "the stream's own write is back").to.equal(false);
  });

  it("shows nothing and reads nothing when the stream is not a terminal", async () => {
    const store = new CountsStub();
    const stream = new CapturedStream(false);
    const progress = await startRunProgress({ queues: ["mail"], store, stream });
    expect(progress).to.equal(undefined);
    expect(store.calls).to.equal(0);
    expect(stream.text).to.equal("");
  });
});
