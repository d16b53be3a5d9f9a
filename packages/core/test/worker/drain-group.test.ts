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
import type { ClaimBatchParams } from "../../src/store/store-params";
import type { ClaimedBatch } from "../../src/queue/queue-controls";
import { AbstractQueueWorker } from "../../src/worker/abstract-queue-worker";
import { DrainGroup, type DrainGroupMember, type DrainVerdict } from "../../src/worker/drain-group";
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

/**
 * The first claim of the second queue takes its snapshot at once but
 * answers only after the task queue's second claim has answered: an
 * outcome of the task queue is recorded while it is out, as when a claim
 * waits for a new server connection.
 */
class SecondQueueFirstClaimLate extends InMemoryJobStore {
  #taskClaims = 0;
  #heldOne = false;
  #release: () => void = () => undefined;
  readonly #released = new Promise<void>((resolve) => (this.#release = resolve));

  override async claimBatch(params: ClaimBatchParams): Promise<ClaimedBatch> {
    if (params.queue === Second.name && !this.#heldOne) {
      this.#heldOne = true;
      const answer = await super.claimBatch(params);
      await this.#released;
      return answer;
    }
    const answer = await super.claimBatch(params);
    if (params.queue === Task.name && (this.#taskClaims += 1) === 2) this.#release();
    return answer;
  }
}

describe("DrainGroup: drain-mode runs that end together", () => {
  /** A member of `group` and how many times it was woken. */
  function member(group: DrainGroup) {
    const woken = { count: 0 };
    return { woken, in: group.join(() => (woken.count += 1)) };
  }

  /** `run`'s claim is sent and takes jobs. */
  function fullClaim(run: DrainGroupMember): void {
    run.claimSent();
    run.claimedJobs();
  }

  /** `run`'s claim is sent and comes back empty. */
  function emptyClaim(run: DrainGroupMember): DrainVerdict {
    run.claimSent();
    return run.foundEmpty();
  }

  it("lets a run alone in its group end at its first empty look", () => {
    const group = new DrainGroup();
    expect(emptyClaim(member(group).in)).to.equal("drained");
  });

  it("keeps an idle run waiting while another works, wakes it at each outcome, and ends both once neither found work since", () => {
    const group = new DrainGroup();
    const a = member(group);
    const b = member(group);
    fullClaim(b.in);
    expect(emptyClaim(a.in), "b is at work").to.equal("wait");
    b.in.recorded();
    expect(a.woken.count, "an outcome of b wakes a").to.equal(1);
    expect(b.woken.count, "b is not woken by its own outcome").to.equal(0);
    expect(emptyClaim(b.in), "a has not looked since b's outcome").to.equal("wait");
    expect(emptyClaim(a.in), "both looked since the last outcome").to.equal("drained");
    expect(b.woken.count, "b is told to look again").to.equal(1);
    expect(emptyClaim(b.in)).to.equal("drained");
  });

  it("has a run look again when another recorded an outcome while its empty claim ran: the claim's snapshot may predate it", () => {
    const group = new DrainGroup();
    const a = member(group);
    const b = member(group);
    b.in.claimSent();
    fullClaim(a.in);
    a.in.recorded();
    expect(emptyClaim(a.in), "b's claim is still out").to.equal("wait");
    expect(b.in.foundEmpty(), "b's claim was sent before a's outcome").to.equal("look-again");
    expect(a.woken.count, "nothing new for a").to.equal(0);
    expect(emptyClaim(b.in), "b's next claim was sent after it").to.equal("drained");
    expect(a.woken.count, "a is told to look again").to.equal(1);
    expect(emptyClaim(a.in)).to.equal("drained");
  });

  it("counts a run that took jobs as at work, whatever it found before", () => {
    const group = new DrainGroup();
    const a = member(group);
    const b = member(group);
    expect(emptyClaim(a.in)).to.equal("wait");
    fullClaim(a.in);
    expect(emptyClaim(b.in), "a took jobs after its empty look").to.equal("wait");
  });

  it("wakes the others when a run leaves, and no longer waits for it", () => {
    const group = new DrainGroup();
    const a = member(group);
    const b = member(group);
    fullClaim(b.in);
    expect(emptyClaim(a.in)).to.equal("wait");
    b.in.leave();
    expect(a.woken.count).to.equal(1);
    expect(emptyClaim(a.in)).to.equal("drained");
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

  it("runs a step one queue released while the other queue's empty claim was out, whose snapshot predates it", async () => {
    const store = new SecondQueueFirstClaimLate();
    const ran: string[] = [];
    const first = new TaskWorker(store, async (item) => ran.push(`task ${item.n}`), {});
    const second = new SecondWorker(store, async (item) => ran.push(`second ${item.n}`));
    await new JobClient(store).enqueueWorkflow("released-during-a-claim", {
      a: step(Task, { n: 1 }),
      b: step(Second, { n: 2 }, { after: ["a"] }),
    });

    const report = await runWorkers({ workers: [first, second], mode: "once", store, log: createSilentLogger() });

    expect(ran).to.deep.equal(["task 1", "second 2"]);
    expect(report.totals).to.include({ claimed: 2, succeeded: 2 });
  });
});
