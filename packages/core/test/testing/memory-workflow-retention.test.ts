import { expect } from "chai";
import { newJob } from "../../src/testing/conformance/conformance-harness";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";

describe("workflows in the in-memory store under retention", () => {
  it("reads a workflow without the steps retention deleted, and forgets it with its last step", async () => {
    const clock = new ManualClock();
    const store = new InMemoryJobStore({ clock });
    const queue = "kept";
    const other = "pruned";
    const { id, jobIds } = await store.enqueueWorkflow({
      name: "pruned",
      steps: [
        { step: "a", job: newJob(other, { n: 0 }), after: [], ignoreFailedDependencies: false },
        { step: "b", job: newJob(queue, { n: 1 }), after: [0], ignoreFailedDependencies: false },
      ],
    });
    for (const name of [other, queue]) {
      const jobs = await store.claimBatch({ queue: name, workerId: "w", limit: 10, leaseMs: 60_000 });
      await store.completeJobs({ workerId: "w", jobs: jobs.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: "1", durationMs: 1 })) });
    }
    await clock.advance(1_000);
    expect(await store.deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 1, limit: 10, queues: [other] })).to.equal(1);
    const workflow = await store.getWorkflow({ id });
    expect(workflow).to.include({ stepCount: 1, state: "succeeded" });
    expect(workflow!.steps.map((entry) => [entry.jobId, entry.after])).to.deep.equal([[jobIds[1], []]]);
    expect(await store.readDependencies({ jobId: jobIds[1]! })).to.deep.equal([]);
    expect(await store.deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 1, limit: 10 })).to.equal(1);
    expect(await store.getWorkflow({ id })).to.equal(undefined);
    expect(await store.listWorkflows({ limit: 10 })).to.deep.equal([]);
    expect(await store.cancelWorkflow({ id })).to.equal(undefined);
  });
});
