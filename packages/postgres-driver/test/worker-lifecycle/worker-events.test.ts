import { expect } from "chai";
import { WorkerEvents, type WorkerEventName } from "@stint/core";
import { WORKER_EVENT_NAMES } from "@stint/core/internal";
import { buildNewJob } from "@stint/core/driver";
import { schemaPerTest, ScriptedWorker, TaskJob } from "./scripted-worker";

describe("a worker's events against PostgreSQL", () => {
  const { schema, enqueue } = schemaPerTest();

  /** Records every event of `events` as "name#attempt(detail)", per job id, and the worker-level ones in order. */
  function record(events: WorkerEvents) {
    const byJob = new Map<string, string[]>();
    const worker: string[] = [];
    for (const name of WORKER_EVENT_NAMES) {
      events.on(name, (event: object) => {
        const e = event as {
          jobId?: string;
          attempt?: number;
          willRetry?: boolean;
          retryAt?: Date | null;
          result?: unknown;
          runAt?: Date;
          at: Date;
          workerId: string;
        };
        expect(e.at).to.be.instanceOf(Date);
        expect(e.workerId).to.be.a("string").and.not.equal("");
        if (e.jobId === undefined) return void worker.push(name);
        expect(e.runAt).to.be.instanceOf(Date);
        const detail =
          name === "job.failed"
            ? `(retry=${e.willRetry},${e.retryAt === null ? "no" : "at"})`
            : name === "job.succeeded"
              ? `(${JSON.stringify(e.result)})`
              : "";
        byJob.set(e.jobId, [...(byJob.get(e.jobId) ?? []), `${name}#${e.attempt}${detail}`]);
      });
    }
    return { byJob, worker };
  }

  it("emits exactly the documented events, in order, through retry, dead and success", async () => {
    const flaky = await enqueue(1);
    const doomed = await enqueue(2);
    const fine = await enqueue(3);
    const invalid = (await schema().store.enqueue({ ...buildNewJob(TaskJob, { n: 4 }), payloadJson: '{"n":"four"}' })).id;
    let flakyCalls = 0;
    const worker = new ScriptedWorker(schema().store, {
      process: async ({ n }) => {
        if (n === 1 && (flakyCalls += 1) === 1) throw new Error("upstream answered 503");
        if (n === 2) throw new Error("the mail server is down");
        return { n };
      },
    });
    const shared = new WorkerEvents();
    const own = record(worker.events);
    const run = record(shared);

    const summary = await worker.start({ events: shared });

    expect(summary).to.include({ succeeded: 2, retried: 3, dead: 2 });
    for (const seen of [own, run]) {
      expect(seen.byJob.get(flaky)).to.deep.equal(["job.started#1", "job.failed#1(retry=true,at)", "job.started#2", 'job.succeeded#2({"n":1})']);
      expect(seen.byJob.get(doomed)).to.deep.equal([
        "job.started#1",
        "job.failed#1(retry=true,at)",
        "job.started#2",
        "job.failed#2(retry=true,at)",
        "job.started#3",
        "job.failed#3(retry=false,no)",
        "job.dead#3",
      ]);
      expect(seen.byJob.get(fine)).to.deep.equal(["job.started#1", 'job.succeeded#1({"n":3})']);
      expect(seen.byJob.get(invalid)).to.deep.equal(["job.started#1", "job.failed#1(retry=false,no)", "job.dead#1"]);
      expect(seen.worker).to.deep.equal(["worker.started", "queue.drained", "worker.stopped"] satisfies WorkerEventName[]);
    }
  });

  it("hands the run summary to worker.stopped", async () => {
    await enqueue(1);
    const worker = new ScriptedWorker(schema().store, { process: async () => undefined });
    let stopped: unknown;
    worker.events.on("worker.stopped", (event) => (stopped = event.summary));
    const summary = await worker.start();
    expect(stopped).to.equal(summary);
  });

  it("drains as many jobs with the same outcomes while a listener throws and another takes 5 s", async () => {
    for (let n = 0; n < 300; n += 1) await enqueue(n);
    const run = async (listen: (events: WorkerEvents) => void) => {
      const worker = new ScriptedWorker(
        schema().store,
        { process: async ({ n }) => (n % 10 === 0 ? Promise.reject(new Error("every tenth fails")) : n) },
        { concurrency: 8 },
      );
      listen(worker.events);
      return worker.start({ maxJobs: 120 });
    };
    const baseline = await run(() => undefined);

    let slowSettled = 0;
    let slowCalls = 0;
    const summary = await run((events) => {
      for (const name of ["job.started", "job.succeeded", "job.failed"] as const) {
        events.on(name, () => {
          throw new Error("listener bug");
        });
        events.on(name, async () => {
          slowCalls += 1;
          await new Promise((resolve) => setTimeout(resolve, 5_000).unref());
          slowSettled += 1;
        });
      }
    });

    const counts = ({ claimed, succeeded, retried, dead, stoppedBecause }: typeof summary) => ({ claimed, succeeded, retried, dead, stoppedBecause });
    expect(counts(summary)).to.deep.equal(counts(baseline));
    expect(summary).to.include({ claimed: 120, stoppedBecause: "max-jobs" });
    expect(slowCalls, "the slow listener heard every start and outcome").to.equal(240);
    expect(slowSettled, "the run ended without awaiting any slow listener").to.equal(0);
    expect(summary).to.include({ succeeded: 108, retried: 12 });
    const [task] = await schema().store.countByQueue({ queues: [TaskJob.name] });
    expect(task?.counts).to.include({ succeeded: 216, failed: 24, queued: 60, running: 0 });
  });
});
