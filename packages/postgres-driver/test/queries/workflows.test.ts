import { expect } from "chai";
import { sql } from "kysely";
import {
  AbstractQueueWorker,
  createSilentLogger,
  JobClient,
  defineJob,
  runWorkers,
  step,
  WorkflowDefinitionError,
  type ClaimedJob,
  type JobStore,
} from "@stint/core";
import type { ClaimBatchParams, ClaimedBatch } from "@stint/core/driver";
import { planWorkflowSteps } from "@stint/core/internal";
import { createTestSchema, type TestSchema } from "../../src/testing";

const Step = defineJob<{ name: string }, { done: string }>("wf-step", { maxAttempts: 1 });

/** Runs every step it claims at once, in drain mode; its handler returns the step's name. */
class StepWorker extends AbstractQueueWorker<{ name: string }> {
  readonly job = Step;

  /** `ran`: where each step's name goes as it runs. */
  constructor(
    store: JobStore,
    private readonly ran: string[] = [],
  ) {
    super(store, createSilentLogger(), { concurrency: 10 });
  }

  protected parse(payload: unknown): { name: string } {
    return payload as { name: string };
  }

  protected processItem(item: { name: string }): Promise<{ done: string }> {
    this.ran.push(item.name);
    return Promise.resolve({ done: item.name });
  }
}

/** A second queue's steps: a `StepWorker` of their own kind. */
const OtherStep = defineJob<{ name: string }, { done: string }>("wf-other-step", { maxAttempts: 1 });

class OtherStepWorker extends StepWorker {
  override readonly job = OtherStep;
}

describe("workflows on PostgreSQL", () => {
  let test: TestSchema;
  let client: JobClient;

  beforeEach(async () => {
    test = await createTestSchema({ maxConnections: 8 });
    client = new JobClient(test.store);
  });
  afterEach(async () => {
    await test.drop();
  });

  const claim = (limit = 100, workerId = "w1") => test.store.claimBatch({ queue: Step.name, workerId, limit, leaseMs: 60_000 });
  const names = (jobs: readonly ClaimedJob[]) => jobs.map((job) => (job.payload as { name: string }).name).sort();
  const succeed = (jobs: readonly ClaimedJob[], workerId = "w1") =>
    test.store.completeJobs({
      workerId,
      jobs: jobs.map((job) => ({
        id: job.id,
        attempt: job.attempt,
        resultJson: JSON.stringify({ done: (job.payload as { name: string }).name }),
        durationMs: 1,
      })),
    });
  const die = (jobs: readonly ClaimedJob[]) =>
    test.store.markJobsDead({
      workerId: "w1",
      jobs: jobs.map((job) => ({
        id: job.id,
        attempt: job.attempt,
        failure: { message: "boom", code: "STINT_PERMANENT" },
        outcome: "dead" as const,
        durationMs: 1,
      })),
    });
  const s = (name: string, after: string[] = [], more = {}) => step(Step, { name }, { after, ...more });

  it("claims only the steps that wait for nothing, and keeps the others blocked", async () => {
    const workflow = await client.enqueueWorkflow("diamond", { a: s("a"), b: s("b", ["a"]), c: s("c", ["a"]), d: s("d", ["b", "c"]) });
    expect(names(await claim())).to.deep.equal(["a"]);
    expect(await claim()).to.deep.equal([]);
    const stored = await test.store.getWorkflow({ id: workflow.id });
    expect(stored?.steps.map((entry) => [entry.step, entry.state])).to.deep.equal([
      ["a", "running"],
      ["b", "blocked"],
      ["c", "blocked"],
      ["d", "blocked"],
    ]);
  });

  it("unblocks in the statement that records the success, and hands results down", async () => {
    const workflow = await client.enqueueWorkflow("diamond", { a: s("a"), b: s("b", ["a"]), c: s("c", ["a"]), d: s("d", ["b", "c"]) });
    const a = await claim();
    await succeed(a);
    const middle = await claim();
    expect(names(middle)).to.deep.equal(["b", "c"]);
    await succeed(middle.slice(0, 1));
    expect(await claim()).to.deep.equal([]);
    await succeed(middle.slice(1));
    const last = await claim();
    expect(names(last)).to.deep.equal(["d"]);
    expect(last[0]?.workflowId).to.equal(workflow.id);
    const deps = await test.store.readDependencies({ jobId: last[0]!.id });
    expect(deps.map((dep) => [dep.step, dep.state, dep.payload, dep.result])).to.deep.equal([
      ["b", "succeeded", { name: "b" }, { done: "b" }],
      ["c", "succeeded", { name: "c" }, { done: "c" }],
    ]);
    await succeed(last);
    expect(await client.waitFor(workflow, { timeoutMs: 5_000 })).to.deep.equal({ d: { done: "d" } });
    expect((await test.store.getWorkflow({ id: workflow.id }))?.state).to.equal("succeeded");
  });

  it("cancels what waits for a dead step, transitively, naming it, and runs a step that ignores failed dependencies", async () => {
    const workflow = await client.enqueueWorkflow("failing", {
      a: s("a"),
      b: s("b", ["a"]),
      c: s("c", ["b"]),
      audit: s("audit", ["a"], { ignoreFailedDependencies: true }),
    });
    await die(await claim());
    const stored = await test.store.getWorkflow({ id: workflow.id });
    expect(stored?.steps.map((entry) => [entry.step, entry.state, entry.errorCode])).to.deep.equal([
      ["a", "dead", "STINT_PERMANENT"],
      ["b", "cancelled", "STINT_DEPENDENCY_FAILED"],
      ["c", "cancelled", "STINT_DEPENDENCY_FAILED"],
      ["audit", "queued", null],
    ]);
    expect(stored?.steps[2]?.lastError).to.match(/step "a" \(job \d+\) that it waits for is dead/);
    const audit = await claim();
    expect(names(audit)).to.deep.equal(["audit"]);
    expect((await test.store.readDependencies({ jobId: audit[0]!.id })).map((dep) => dep.state)).to.deep.equal(["dead"]);
    await succeed(audit);
    expect((await test.store.getWorkflow({ id: workflow.id }))?.state).to.equal("failed");
  });

  it("resumes from a retried dead step: what it cancelled comes back blocked and runs after it", async () => {
    const workflow = await client.enqueueWorkflow("resumed", { a: s("a"), b: s("b", ["a"]), c: s("c", ["b"]) });
    const [a] = await claim();
    await die([a!]);
    expect(await test.store.retryJob({ id: a!.id })).to.equal(true);
    let stored = await test.store.getWorkflow({ id: workflow.id });
    expect(stored?.steps.map((entry) => entry.state)).to.deep.equal(["queued", "blocked", "blocked"]);
    await succeed(await claim());
    await succeed(await claim());
    expect(names(await claim())).to.deep.equal(["c"]);
    stored = await test.store.getWorkflow({ id: workflow.id });
    expect(stored?.state).to.equal("running");
  });

  it("keeps a retried step blocked while a step it waits for is still dead", async () => {
    const workflow = await client.enqueueWorkflow("stuck", { a: s("a"), b: s("b", ["a"]) });
    await die(await claim());
    const b = (await test.store.getWorkflow({ id: workflow.id }))!.steps[1]!;
    expect(await test.store.retryJob({ id: b.jobId })).to.equal(true);
    expect((await test.store.getJob({ id: b.jobId }))?.state).to.equal("blocked");
    expect(await claim()).to.deep.equal([]);
  });

  it("adds steps with a success, in its transaction, and makes the steps after it wait for them", async () => {
    const workflow = await client.enqueueWorkflow("fan-out", { list: s("list"), report: s("report", ["list"]) });
    const [list] = await claim();
    const added = planWorkflowSteps({ item: ["x", "y", "z"].map((name) => s(name)) });
    const { applied } = await test.store.completeInTransaction({ workerId: "w1", job: list!, resultJson: () => null }, (trx) =>
      test.store.addWorkflowSteps({ workerId: "w1", parent: list!, steps: added }, trx),
    );
    expect(applied).to.equal(true);
    const items = await claim();
    expect(names(items)).to.deep.equal(["x", "y", "z"]);
    await succeed(items.slice(0, 2));
    expect(await claim()).to.deep.equal([]);
    await succeed(items.slice(2));
    expect(names(await claim())).to.deep.equal(["report"]);
    expect((await test.store.getWorkflow({ id: workflow.id }))?.stepCount).to.equal(5);
  });

  it("refuses added steps past the workflow's limit, naming the first, and writes none", async () => {
    const workflow = await client.enqueueWorkflow("full", { list: s("list") });
    await sql`UPDATE ${sql.id(test.schema, "workflows")} SET step_count = 19999 WHERE id = ${workflow.id}::bigint`.execute(test.db);
    const [list] = await claim();
    const added = planWorkflowSteps({ item: [s("x"), s("y")] }, { added: true });
    const refused = await test.db
      .transaction()
      .execute((trx) => test.store.addWorkflowSteps({ workerId: "w1", parent: list!, steps: added }, trx))
      .catch((thrown: unknown) => thrown);
    expect(refused).to.be.instanceOf(WorkflowDefinitionError).and.to.include({ step: "item" });
    expect((await test.store.getWorkflow({ id: workflow.id }))?.steps).to.have.length(1);
  });

  it("writes no added step for a worker that lost the attempt", async () => {
    await client.enqueueWorkflow("fenced", { list: s("list") });
    const [list] = await claim();
    const added = planWorkflowSteps({ item: [s("x")] });
    const result = await test.db.transaction().execute((trx) => test.store.addWorkflowSteps({ workerId: "someone-else", parent: list!, steps: added }, trx));
    expect(result).to.equal(undefined);
    const [counted] = await test.store.countByQueue({ queues: [Step.name] });
    expect(counted?.counts).to.include({ running: 1, queued: 0, blocked: 0 });
  });

  it("cancels a workflow: its waiting steps at once, its running one as a running job is cancelled", async () => {
    const workflow = await client.enqueueWorkflow("cancelled", { a: s("a"), b: s("b"), c: s("c", ["a", "b"]) });
    await claim(1);
    expect(await test.store.cancelWorkflow({ id: workflow.id })).to.equal(3);
    const stored = await test.store.getWorkflow({ id: workflow.id });
    expect(stored?.state).to.equal("cancelled");
    expect(stored?.steps.map((entry) => entry.state)).to.deep.equal(["cancelled", "cancelled", "cancelled"]);
    expect(await test.store.cancelWorkflow({ id: "999999" })).to.equal(undefined);
  });

  it("runs a chain in drain mode with one claim per step, each sent once the step before it is recorded", async () => {
    const steps = Object.fromEntries(Array.from({ length: 30 }, (_, n) => [`s${n}`, s(`s${n}`, n === 0 ? [] : [`s${n - 1}`])]));
    const workflow = await client.enqueueWorkflow("chain", steps);
    const claims: number[] = [];
    const counted = new Proxy<JobStore>(test.store, {
      get: (target, name) => {
        if (name === "claimBatch")
          return async (params: ClaimBatchParams): Promise<ClaimedBatch> => {
            const jobs = await target.claimBatch(params);
            claims.push(jobs.length);
            return jobs;
          };
        const value: unknown = Reflect.get(target, name);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    expect(await new StepWorker(counted).start()).to.include({ succeeded: 30, stoppedBecause: "drained" });
    // No claim comes back empty before the last one, which finds the queue drained.
    expect(claims).to.deep.equal([...Array.from({ length: 30 }, () => 1), 0]);
    expect((await test.store.getWorkflow({ id: workflow.id }))?.state).to.equal("succeeded");
  });

  it("unblocks a step exactly once when its two dependencies finish at the same time, 50 times over", async () => {
    for (let round = 0; round < 50; round += 1) {
      await client.enqueueWorkflow("race", { a: s(`a${round}`), b: s(`b${round}`), c: s(`c${round}`, ["a", "b"]) });
      const first = await claim(1, "w1");
      const second = await claim(1, "w2");
      await Promise.all([succeed(first, "w1"), succeed(second, "w2")]);
      const last = await claim();
      expect(names(last), `round ${round}`).to.deep.equal([`c${round}`]);
      await succeed(last);
    }
  });

  it("goes with its last step when retention deletes the steps, dependencies and all", async () => {
    const kept = await client.enqueueWorkflow("kept", { a: s("a"), b: s("b", ["a"]) });
    await succeed(await claim());
    await succeed(await claim());
    const running = await client.enqueueWorkflow("running", { a: s("a"), b: s("b", ["a"]) });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await test.store.deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 10, limit: 1_000 });
    expect(await test.store.getWorkflow({ id: kept.id })).to.equal(undefined);
    expect((await test.store.getWorkflow({ id: running.id }))?.steps).to.have.length(2);
    const { rows } = await sql<{ workflow_id: string }>`SELECT DISTINCT workflow_id FROM ${sql.id(test.schema, "workflow_deps")}`.execute(test.db);
    expect(rows.map((row) => String(row.workflow_id))).to.deep.equal([running.id]);
  });

  it("refuses a cycle before anything is written", async () => {
    const refused = await client.enqueueWorkflow("loop", { a: s("a", ["b"]), b: s("b", ["a"]) }).catch((thrown: unknown) => thrown);
    expect(refused).to.be.instanceOf(WorkflowDefinitionError);
    expect(await test.store.listWorkflows({ limit: 10 })).to.deep.equal([]);
  });

  it("lists workflows newest first, with their derived states", async () => {
    const done = await client.enqueueWorkflow("one", { a: s("a") });
    await succeed(await claim());
    const waiting = await client.enqueueWorkflow("two", { a: s("a") });
    const listed = await test.store.listWorkflows({ limit: 10 });
    expect(listed.map((entry) => [entry.id, entry.state])).to.deep.equal([
      [waiting.id, "running"],
      [done.id, "succeeded"],
    ]);
    expect((await test.store.listWorkflows({ limit: 10, state: "succeeded" })).map((entry) => entry.name)).to.deep.equal(["one"]);
  });

  it("runs a workflow whose steps go back and forth between two queues in one once-mode run of both", async () => {
    const order: string[] = [];
    const workflow = await client.enqueueWorkflow("back-and-forth", {
      a: step(Step, { name: "a" }),
      b: [1, 2].map((n) => step(OtherStep, { name: `b${n}` }, { after: ["a"] })),
      c: step(Step, { name: "c" }, { after: ["b"] }),
      d: step(OtherStep, { name: "d" }, { after: ["c"] }),
    });
    const report = await runWorkers({
      workers: [new StepWorker(test.store, order), new OtherStepWorker(test.store, order)],
      mode: "once",
      store: test.store,
      log: createSilentLogger(),
    });
    expect(report.stoppedBecause).to.equal("drained");
    expect(report.totals).to.include({ claimed: 5, succeeded: 5 });
    expect(order[0]).to.equal("a");
    expect(order.slice(1, 3).sort()).to.deep.equal(["b1", "b2"]);
    expect(order.slice(3)).to.deep.equal(["c", "d"]);
    expect((await test.store.getWorkflow({ id: workflow.id }))?.state).to.equal("succeeded");
  });
});
