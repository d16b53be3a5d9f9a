import { expect } from "chai";
import { defineJob, JobClient, step } from "@stint/core";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";

const Step = defineJob<{ n: number }>("cancel-race-step", { maxAttempts: 1 });

// Two connections racing as a worker and an operator do: the statement that records a step's success (and unblocks
// the steps after it) and cancelWorkflow, started together. No worker process: the race is between the two statements.
//
// What can go wrong: a step the success unblocks escaping the cancel (the cancel must find it in its new state after
// waiting for its lock), and the two statements deadlocking (both must lock running steps before the steps after them).
// cancelJob of a blocked step whose last dependency succeeds at that moment must likewise cancel it, not miss it.
describe("cancelling a workflow while one of its steps succeeds", function () {
  this.timeout(120_000);
  let t: TestSchema;
  beforeEach(async () => {
    t = await createTestSchema({ maxConnections: 4 });
  });
  afterEach(async () => {
    await t.drop();
  });

  it("leaves no step of the cancelled workflow to run, and neither statement fails, in 300 races", async () => {
    const client = new JobClient(t.store);
    const width = 50;
    const escaped: string[] = [];
    const failed: string[] = [];
    for (let round = 0; round < 300; round += 1) {
      const workflow = await client.enqueueWorkflow(`race-${round}`, {
        first: step(Step, { n: 0 }),
        rest: Array.from({ length: width }, (_, n) => step(Step, { n: n + 1 }, { after: ["first"] })),
      });
      const [first] = await t.store.claimBatch({ queue: Step.name, workerId: "w1", limit: 1, leaseMs: 60_000 });
      const [completed, cancelled] = await Promise.allSettled([
        t.store.completeJobs({ workerId: "w1", jobs: [{ id: first!.id, attempt: first!.attempt, resultJson: "null", durationMs: 1 }] }),
        client.cancelWorkflow(workflow),
      ]);
      for (const [what, outcome] of [
        ["completeJobs", completed],
        ["cancelWorkflow", cancelled],
      ] as const) {
        if (outcome.status === "rejected") failed.push(`round ${round}: ${what}: ${String((outcome.reason as Error).message)}`);
      }
      const stored = (await t.store.getWorkflow({ id: workflow.id }))!;
      const runnable = stored.steps.filter((entry) => entry.state === "queued" || entry.state === "blocked").length;
      if (runnable > 0) {
        escaped.push(
          `round ${round}: ${runnable} steps ${stored.steps.at(-1)!.state} after cancelWorkflow resolved with ${String(cancelled.status === "fulfilled" ? cancelled.value : "an error")} (workflow ${stored.state}, first ${stored.steps[0]!.state})`,
        );
      }
      // Whatever escaped is taken away, so that the next round's claim finds only its own first step.
      await client.cancelWorkflow(workflow);
    }
    const examples = [...escaped.slice(0, 3), ...failed.slice(0, 3)].join("; ");
    expect({ escaped: escaped.length, failed: failed.length }, examples).to.deep.equal({ escaped: 0, failed: 0 });
  });
  it("cancels a blocked step whose last dependency succeeds at the same moment, in 200 races", async () => {
    const client = new JobClient(t.store);
    const missed: string[] = [];
    for (let round = 0; round < 200; round += 1) {
      const workflow = await client.enqueueWorkflow(`single-${round}`, { first: step(Step, { n: 0 }), second: step(Step, { n: 1 }, { after: ["first"] }) });
      const [first] = await t.store.claimBatch({ queue: Step.name, workerId: "w1", limit: 1, leaseMs: 60_000 });
      const [, cancelled] = await Promise.all([
        t.store.completeJobs({ workerId: "w1", jobs: [{ id: first!.id, attempt: first!.attempt, resultJson: "null", durationMs: 1 }] }),
        t.store.cancelJob({ id: workflow.steps.second.id }),
      ]);
      const second = await t.store.getJob({ id: workflow.steps.second.id });
      // Either the cancel took the step (true, and it is cancelled) or the step was no longer to run; never false and queued.
      if (second?.state !== "cancelled") {
        missed.push(`round ${round}: cancelJob resolved with ${String(cancelled)} and the step is ${String(second?.state)}`);
        await t.store.cancelJob({ id: workflow.steps.second.id });
      }
    }
    expect(missed.length, missed.slice(0, 3).join("; ")).to.equal(0);
  });
});
