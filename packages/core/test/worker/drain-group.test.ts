import { expect } from "chai";
import { JobClient } from "../../src/client/job-client";
import { ErrorCode } from "../../src/errors/error-codes";
import { errorCodeOf } from "../../src/errors/stint-error";
import { defineJob } from "../../src/job/job-definition";
import { createSilentLogger } from "../../src/logging/create-logger";
import type { Logger } from "../../src/logging/logger";
import { runWorkers } from "../../src/runtime/run-workers";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import type { JobStore } from "../../src/store/job-store";
import { AbstractQueueWorker } from "../../src/worker/abstract-queue-worker";
import { DrainGroup } from "../../src/worker/drain-group";
import { step } from "../../src/workflow/workflow-step";
import { Task, TaskWorker } from "../support/task-worker";

/** A second queue's kind, for runs of two queues. */
const Second = defineJob<{ n: number }>("second");

class SecondWorker extends AbstractQueueWorker<{ n: number }> {
  readonly job = Second;

  constructor(
    store: JobStore,
    private readonly handler: (item: { n: number }) => Promise<unknown>,
    log: Logger = createSilentLogger(),
  ) {
    super(store, log, {});
  }

  protected parse(payload: unknown): { n: number } {
    return payload as { n: number };
  }

  protected processItem(item: { n: number }): Promise<unknown> {
    return this.handler(item);
  }
}

describe("DrainGroup: drain-mode runs that end together", () => {
  /** A member of `group` and how many times it was woken. */
  function member(group: DrainGroup) {
    const woken = { count: 0 };
    return { woken, in: group.join(() => (woken.count += 1)) };
  }

  it("lets a run alone in its group end at its first empty look", () => {
    const group = new DrainGroup();
    expect(member(group).in.drained()).to.equal(true);
  });

  it("keeps an idle run waiting while another works, wakes it at each outcome, and ends both once neither found work since", () => {
    const group = new DrainGroup();
    const a = member(group);
    const b = member(group);
    b.in.claimedJobs();
    expect(a.in.drained(), "b is at work").to.equal(false);
    b.in.recorded();
    expect(a.woken.count, "an outcome of b wakes a").to.equal(1);
    expect(b.woken.count, "b is not woken by its own outcome").to.equal(0);
    expect(b.in.drained(), "a has not looked since b's outcome").to.equal(false);
    expect(a.in.drained(), "both looked since the last outcome").to.equal(true);
    expect(b.woken.count, "b is told to look again").to.equal(1);
    expect(b.in.drained()).to.equal(true);
  });

  it("counts a run that took jobs as at work, whatever it found before", () => {
    const group = new DrainGroup();
    const a = member(group);
    const b = member(group);
    expect(a.in.drained()).to.equal(false);
    a.in.claimedJobs();
    expect(b.in.drained(), "a took jobs after its empty look").to.equal(false);
  });

  it("wakes the others when a run leaves, and no longer waits for it", () => {
    const group = new DrainGroup();
    const a = member(group);
    const b = member(group);
    b.in.claimedJobs();
    expect(a.in.drained()).to.equal(false);
    b.in.leave();
    expect(a.woken.count).to.equal(1);
    expect(a.in.drained()).to.equal(true);
  });

  it("is refused in loop mode, and anything but a DrainGroup is refused, each naming drainGroup", async () => {
    const store = new InMemoryJobStore();
    const worker = new TaskWorker(store, async () => undefined, {});
    for (const options of [{ mode: "loop" as const, drainGroup: new DrainGroup() }, { drainGroup: {} as DrainGroup }]) {
      const error = await worker.start(options).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(errorCodeOf(error)).to.equal(ErrorCode.Config);
      expect((error as Error).message).to.contain("drainGroup");
    }
  });

  it("lets a once-mode run of two queues run a workflow whose steps go back and forth between them", async () => {
    const store = new InMemoryJobStore();
    const ran: string[] = [];
    const first = new TaskWorker(store, async (item) => ran.push(`task ${item.n}`), {});
    const second = new SecondWorker(store, async (item) => ran.push(`second ${item.n}`));
    const workflow = await new JobClient(store).enqueueWorkflow("back-and-forth", {
      a: step(Task, { n: 1 }),
      b: step(Second, { n: 2 }, { after: ["a"] }),
      c: step(Task, { n: 3 }, { after: ["b"] }),
      d: step(Second, { n: 4 }, { after: ["c"] }),
    });

    const report = await runWorkers({ workers: [first, second], mode: "once", store, log: createSilentLogger() });

    expect(ran).to.deep.equal(["task 1", "second 2", "task 3", "second 4"]);
    expect(report).to.include({ stoppedBecause: "drained" });
    expect(report.totals).to.include({ claimed: 4, succeeded: 4 });
    expect(report.workers.map((summary) => [summary.queue, summary.succeeded])).to.deep.equal([
      ["task", 2],
      ["second", 2],
    ]);
    expect((await store.getWorkflow({ id: workflow.id }))?.state).to.equal("succeeded");
  });
});
