import { expect } from "chai";
import { JobClient } from "../../src/client/job-client";
import { ErrorCode } from "../../src/errors/error-codes";
import { defineJob } from "../../src/job/job-definition";
import type { ClaimedJob } from "../../src/job/job-record";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { step } from "../../src/workflow/workflow-step";
import { WorkflowDefinitionError, WorkflowFailedError, WorkflowNotFoundError } from "../../src/workflow/workflow-errors";

const Fetch = defineJob<{ folder: string }, { documents: number[] }>("wf-fetch");
const Summarise = defineJob<{ id: number }, { id: number; words: number }>("wf-summarise");
const Report = defineJob<{ folder: string }, { total: number }>("wf-report");

describe("JobClient workflows on the in-memory store", () => {
  let store: InMemoryJobStore;
  let client: JobClient;

  beforeEach(() => {
    store = new InMemoryJobStore({ clock: new ManualClock() });
    client = new JobClient(store);
  });

  /** Claims every due job of `queue` and completes each with `result(job)`. */
  async function runQueue(queue: string, result: (job: ClaimedJob) => unknown): Promise<number> {
    const jobs = await store.claimBatch({ queue, workerId: "w", limit: 100, leaseMs: 60_000 });
    await store.completeJobs({
      workerId: "w",
      jobs: jobs.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: JSON.stringify(result(job)), durationMs: 1 })),
    });
    return jobs.length;
  }

  const digest = () =>
    client.enqueueWorkflow("digest", {
      fetch: step(Fetch, { folder: "inbox" }),
      summarise: [1, 2, 3].map((id) => step(Summarise, { id }, { after: ["fetch"] })),
      report: step(Report, { folder: "inbox" }, { after: ["summarise"] }),
      audit: step(Summarise, { id: 0 }, { after: ["fetch"] }),
    });

  it("enqueues every step with its job id, the later ones blocked, and waits for the workflow's final results, typed", async () => {
    const workflow = await digest();
    expect(workflow.name).to.equal("digest");
    expect(workflow.steps.summarise).to.have.length(3);
    const fetchJob = await store.getJob({ id: workflow.steps.fetch.id });
    expect(fetchJob).to.include({ state: "queued", workflowId: workflow.id, step: "fetch" });
    expect((await store.getJob({ id: workflow.steps.report.id }))?.state).to.equal("blocked");

    const waiting = client.waitFor(workflow, { pollIntervalMs: 10 });
    expect(await runQueue(Fetch.name, () => ({ documents: [1, 2, 3] }))).to.equal(1);
    expect(await runQueue(Summarise.name, (job) => ({ id: (job.payload as { id: number }).id, words: 10 }))).to.equal(4);
    expect(await runQueue(Report.name, () => ({ total: 30 }))).to.equal(1);
    const results = await waiting;

    // The final steps' results, by name, typed by their kinds; steps that others wait for are absent.
    const report: { total: number } | undefined = results.report;
    const audit: { id: number; words: number } | undefined = results.audit;
    // @ts-expect-error -- report's result has no `words`
    expect(results.report?.words).to.equal(undefined);
    expect(report).to.deep.equal({ total: 30 });
    expect(audit).to.deep.equal({ id: 0, words: 10 });
    expect(Object.keys(results).sort()).to.deep.equal(["audit", "report"]);
  });

  it("gives a list's results as a list when the list is final", async () => {
    const workflow = await client.enqueueWorkflow("fan-out", {
      fetch: step(Fetch, { folder: "inbox" }),
      summarise: [1, 2].map((id) => step(Summarise, { id }, { after: ["fetch"] })),
    });
    await runQueue(Fetch.name, () => ({ documents: [1, 2] }));
    await runQueue(Summarise.name, (job) => ({ id: (job.payload as { id: number }).id, words: 5 }));
    const results = await client.waitFor(workflow);
    const summaries: { id: number; words: number }[] | undefined = results.summarise;
    expect(summaries).to.deep.equal([
      { id: 1, words: 5 },
      { id: 2, words: 5 },
    ]);
  });

  it("rejects the wait with WorkflowFailedError naming the step that died, not the ones cancelled after it", async () => {
    const workflow = await digest();
    const [fetchJob] = await store.claimBatch({ queue: Fetch.name, workerId: "w", limit: 1, leaseMs: 60_000 });
    await store.markJobsDead({ workerId: "w", jobs: [{ id: fetchJob!.id, attempt: 1, failure: { message: "Error: no inbox", code: null } }] });
    const failure = await client.waitFor(workflow).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(failure).to.be.instanceOf(WorkflowFailedError);
    expect(failure).to.include({ code: ErrorCode.WorkflowFailed, state: "failed", failedStep: "fetch", failedJobId: fetchJob!.id });
    const report = await store.getJob({ id: workflow.steps.report.id });
    expect(report).to.include({ state: "cancelled", errorCode: ErrorCode.DependencyFailed });
  });

  it("rejects a cancelled workflow's wait as cancelled, and an unknown one's as not found", async () => {
    const workflow = await digest();
    expect(await store.cancelWorkflow({ id: workflow.id })).to.equal(6);
    const cancelled = await client.waitFor(workflow).catch((thrown: unknown) => thrown);
    expect(cancelled).to.be.instanceOf(WorkflowFailedError).and.include({ state: "cancelled" });
    const unknown = await client.waitFor({ ...workflow, id: "999" }).catch((thrown: unknown) => thrown);
    expect(unknown).to.be.instanceOf(WorkflowNotFoundError);
  });

  it("refuses a cycle or an unknown step name before writing anything", async () => {
    const cycle = await client
      .enqueueWorkflow("loop", {
        a: step(Fetch, { folder: "x" }, { after: ["b"] }),
        b: step(Fetch, { folder: "y" }, { after: ["a"] }),
      })
      .catch((thrown: unknown) => thrown);
    expect(cycle).to.be.instanceOf(WorkflowDefinitionError);
    const unknown = await client.enqueueWorkflow("typo", { a: step(Fetch, { folder: "x" }, { after: ["nope"] }) }).catch((thrown: unknown) => thrown);
    expect(unknown).to.be.instanceOf(WorkflowDefinitionError).and.include({ step: "a" });
    expect(await store.listWorkflows({ limit: 10 })).to.deep.equal([]);
    expect(await store.countByQueue()).to.deep.equal([]);
  });
});
