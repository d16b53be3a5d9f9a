import { expect } from "chai";
import { MAX_WATCHED_STEPS } from "../../src/client/await-step-ends";
import { awaitWorkflowEnd } from "../../src/client/await-workflow";
import { JobClient } from "../../src/client/job-client";
import { WaitTimeoutError } from "../../src/errors/wait-errors";
import { defineJob } from "../../src/job/job-definition";
import type { ClaimedJob, JobRecord } from "../../src/job/job-record";
import type { JobCompletionSource } from "../../src/store/job-completion-source";
import type { JobIdParams } from "../../src/store/store-params";
import type { ReadStepResultsParams, StepResult } from "../../src/store/workflow-store";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { settle } from "../../src/testing/settle";
import { planWorkflowSteps } from "../../src/workflow/plan-workflow";
import { WorkflowFailedError } from "../../src/workflow/workflow-errors";
import { step } from "../../src/workflow/workflow-step";

const Split = defineJob<{ parts: number }, { parts: number }>("await-wf-split");
const Part = defineJob<{ n: number }, { n: number }>("await-wf-part");

/** The in-memory store, counting the reads a wait for a workflow makes, with completion hints the test sends. */
class CountingStore extends InMemoryJobStore {
  readonly resultReads: ReadStepResultsParams[] = [];
  jobReads = 0;
  readonly #watches = new Map<() => void, string>();
  readonly #hints: JobCompletionSource = {
    watch: async (jobId, onHint) => {
      this.#watches.set(onHint, jobId);
      return { close: async () => void this.#watches.delete(onHint) };
    },
  };

  override get completions(): JobCompletionSource {
    return this.#hints;
  }

  /** The jobs watched now, sorted. */
  get watched(): string[] {
    return [...this.#watches.values()].sort((a, b) => Number(a) - Number(b));
  }

  /** Hints the waits of job `jobId`, as a notification of its end would. */
  hint(jobId: string): void {
    for (const [onHint, watched] of this.#watches) if (watched === jobId) onHint();
  }

  override readStepResults(params: ReadStepResultsParams): Promise<readonly StepResult[]> {
    this.resultReads.push(params);
    return super.readStepResults(params);
  }

  override getJob(params: JobIdParams): Promise<JobRecord | undefined> {
    this.jobReads += 1;
    return super.getJob(params);
  }
}

describe("awaitWorkflowEnd", () => {
  let clock: ManualClock;
  let store: CountingStore;
  let client: JobClient;

  beforeEach(() => {
    clock = new ManualClock();
    store = new CountingStore({ clock });
    client = new JobClient(store);
  });

  /** Claims every due job of `queue` and completes each with its payload as result. */
  async function runQueue(queue: string): Promise<void> {
    const jobs = await store.claimBatch({ queue, workerId: "w", limit: 1_000, leaseMs: 60_000 });
    await store.completeJobs({
      workerId: "w",
      jobs: jobs.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: JSON.stringify(job.payload), durationMs: 1 })),
    });
  }

  it("reads the results of 500 final steps in one store call, and no job one by one", async () => {
    const width = 500;
    const workflow = await client.enqueueWorkflow("fan-out", {
      split: step(Split, { parts: width }),
      parts: Array.from({ length: width }, (_, n) => step(Part, { n }, { after: ["split"] })),
    });
    await runQueue(Split.name);
    await runQueue(Part.name);
    const results = await awaitWorkflowEnd(store, workflow.id, { lists: new Set(["parts"]) }, clock);
    expect(results["parts"]).to.deep.equal(Array.from({ length: width }, (_, n) => ({ n })));
    expect(store.resultReads).to.have.length(1);
    expect(store.resultReads[0]).to.deep.include({ workflowId: workflow.id });
    expect(store.resultReads[0]!.jobIds).to.deep.equal(workflow.steps.parts.map((job) => job.id));
    expect(store.jobReads).to.equal(0);
  });

  /** Settles to "pending", the value, or the rejection, without waiting for it. */
  function track<T>(promise: Promise<T>): () => { state: "pending" | "resolved" | "rejected"; value?: T; error?: unknown } {
    let outcome: { state: "pending" | "resolved" | "rejected"; value?: T; error?: unknown } = { state: "pending" };
    promise.then(
      (value) => (outcome = { state: "resolved", value }),
      (error: unknown) => (outcome = { state: "rejected", error }),
    );
    return () => outcome;
  }

  /** Gives up on `job`: dead, with `message`. */
  async function kill(job: ClaimedJob, message: string): Promise<void> {
    await store.markJobsDead({ workerId: "w", jobs: [{ id: job.id, attempt: job.attempt, failure: { message, code: null } }] });
  }

  it("rejects at once, naming it, when a later final step dies while an earlier one still runs, and leaves no wait behind", async () => {
    const workflow = await client.enqueueWorkflow("two", { first: step(Part, { n: 1 }), second: step(Part, { n: 2 }) });
    const [first, second] = await store.claimBatch({ queue: Part.name, workerId: "w", limit: 2, leaseMs: 60_000 });
    const outcome = track(awaitWorkflowEnd(store, workflow.id, {}, clock));
    await settle();
    expect(store.watched).to.deep.equal([first!.id, second!.id], "both final steps are watched");
    await kill(second!, "Error: out of paper");
    store.hint(second!.id);
    await settle();
    const { state, error } = outcome();
    expect(state).to.equal("rejected");
    expect(error).to.be.instanceOf(WorkflowFailedError).and.include({ state: "failed", failedStep: "second", failedJobId: second!.id });
    expect((error as Error).message).to.include("out of paper");
    expect((await store.getJob({ id: first!.id }))?.state).to.equal("running");
    expect(store.watched).to.deep.equal([], "every wait is closed");
    expect(clock.pendingSleeps).to.equal(0, "and every poll");
  });

  it("watches a bounded number of final steps, and finds one of the others dead at the next poll, reading each watched one once per poll", async () => {
    const width = MAX_WATCHED_STEPS + 24;
    const workflow = await client.enqueueWorkflow("wide", { parts: Array.from({ length: width }, (_, n) => step(Part, { n })) });
    const parts = await store.claimBatch({ queue: Part.name, workerId: "w", limit: width, leaseMs: 60_000 });
    const outcome = track(awaitWorkflowEnd(store, workflow.id, { pollIntervalMs: 1_000 }, clock));
    await settle();
    const ids = workflow.steps.parts.map((job) => job.id);
    expect(store.watched).to.deep.equal(ids.slice(0, MAX_WATCHED_STEPS), "the first ones in enqueue order");
    store.jobReads = 0;
    await clock.advance(1_000);
    expect(outcome().state).to.equal("pending");
    expect(store.jobReads).to.be.at.most(2 * MAX_WATCHED_STEPS, "the watched steps' reads, not one per final step");
    const late = parts.find((job) => job.id === ids[width - 1])!;
    await kill(late, "Error: late");
    await clock.advance(1_000);
    const { state, error } = outcome();
    expect(state).to.equal("rejected");
    expect(error).to.be.instanceOf(WorkflowFailedError).and.include({ failedStep: "parts", failedJobId: late.id });
    expect(store.watched).to.deep.equal([]);
  });

  it("takes the next final step as a watched one succeeds, and resolves once all have", async () => {
    const width = MAX_WATCHED_STEPS + 4;
    const workflow = await client.enqueueWorkflow("wide", { parts: Array.from({ length: width }, (_, n) => step(Part, { n })) });
    const outcome = track(awaitWorkflowEnd(store, workflow.id, { lists: new Set(["parts"]) }, clock));
    await settle();
    const ids = workflow.steps.parts.map((job) => job.id);
    await runQueue(Part.name);
    for (const id of ids.slice(0, MAX_WATCHED_STEPS)) store.hint(id);
    await settle();
    expect(outcome().state).to.equal("resolved");
    expect(outcome().value?.["parts"]).to.have.length(width);
    expect(store.watched).to.deep.equal([]);
  });

  it("waits for the steps a final step adds with its success", async () => {
    const workflow = await client.enqueueWorkflow("dynamic", { list: step(Split, { parts: 2 }) });
    const outcome = track(awaitWorkflowEnd(store, workflow.id, { lists: new Set(["part"]) }, clock));
    const [list] = await store.claimBatch({ queue: Split.name, workerId: "w", limit: 1, leaseMs: 60_000 });
    const added = planWorkflowSteps({ part: [1, 2].map((n) => step(Part, { n })) }, { added: true });
    await store.completeInTransaction({ workerId: "w", job: { id: list!.id, attempt: 1 }, resultJson: (value) => JSON.stringify(value) }, async (trx) => {
      await store.addWorkflowSteps({ workerId: "w", parent: { id: list!.id, attempt: 1 }, steps: added }, trx);
      return { parts: 2 };
    });
    store.hint(list!.id);
    await settle();
    expect(outcome().state).to.equal("pending");
    expect(store.watched).to.have.length(2, "the added steps");
    await runQueue(Part.name);
    for (const id of store.watched) store.hint(id);
    await settle();
    expect(outcome()).to.deep.include({ state: "resolved", value: { list: { parts: 2 }, part: [{ n: 1 }, { n: 2 }] } });
  });

  it("times out with WaitTimeoutError at the deadline, and ends with the caller's signal", async () => {
    const workflow = await client.enqueueWorkflow("two", { first: step(Part, { n: 1 }), second: step(Part, { n: 2 }) });
    const timedOut = track(awaitWorkflowEnd(store, workflow.id, { timeoutMs: 30_000 }, clock));
    await settle();
    await clock.advance(29_999);
    expect(timedOut().state).to.equal("pending");
    await clock.advance(1);
    expect(timedOut().error).to.be.instanceOf(WaitTimeoutError);
    expect(store.watched).to.deep.equal([]);

    const stop = new AbortController();
    const stopped = track(awaitWorkflowEnd(store, workflow.id, { signal: stop.signal }, clock));
    await settle();
    stop.abort(new Error("shutting down"));
    await settle();
    expect(stopped()).to.deep.include({ state: "rejected" });
    expect((stopped().error as Error).message).to.equal("shutting down");
    expect(store.watched).to.deep.equal([]);
    expect(clock.pendingSleeps).to.equal(0);
  });
});
