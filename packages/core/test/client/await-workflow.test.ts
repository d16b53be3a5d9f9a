import { expect } from "chai";
import { awaitWorkflowEnd } from "../../src/client/await-workflow";
import { JobClient } from "../../src/client/job-client";
import { defineJob } from "../../src/job/job-definition";
import type { JobRecord } from "../../src/job/job-record";
import type { JobIdParams } from "../../src/store/store-params";
import type { ReadStepResultsParams, StepResult } from "../../src/store/workflow-store";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { step } from "../../src/workflow/workflow-step";

const Split = defineJob<{ parts: number }, { parts: number }>("await-wf-split");
const Part = defineJob<{ n: number }, { n: number }>("await-wf-part");

/** The in-memory store, counting the reads a wait for a workflow makes. */
class CountingStore extends InMemoryJobStore {
  readonly resultReads: ReadStepResultsParams[] = [];
  jobReads = 0;

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
});
