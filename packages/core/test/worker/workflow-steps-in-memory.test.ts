import { expect } from "chai";
import { JobClient } from "../../src/client/job-client";
import { defineJob } from "../../src/job/job-definition";
import { buildNewJob } from "../../src/job/enqueue-options";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { settle } from "../../src/testing/settle";
import type { StepDependencies } from "../../src/workflow/step-dependencies";
import { step } from "../../src/workflow/workflow-step";
import { BatchTaskWorker } from "../support/batch-task-worker";
import { gate, Task, TaskWorker } from "../support/task-worker";

/** The task kind with its result typed: what the steps' handlers return. */
const Counted = defineJob<{ n: number }, number>(Task.name);

describe("workflow steps run by a worker on the in-memory store", () => {
  let clock: ManualClock;
  let store: InMemoryJobStore;
  let client: JobClient;

  beforeEach(() => {
    clock = new ManualClock();
    store = new InMemoryJobStore({ clock });
    client = new JobClient(store);
  });

  it("hands a step its dependencies' results, typed, and writes the steps a handler adds with its success", async () => {
    const seen: { n: number; parts: number[]; list: number }[] = [];
    let added = false;
    const worker = new TaskWorker(
      store,
      async (item, ctx) => {
        if (item.n === 0) {
          ctx.addSteps({ part: [10, 20, 30].map((n) => step(Counted, { n })) });
          added = (await store.listJobs({ queue: Task.name, limit: 10 })).length > 2;
          return 1;
        }
        if (item.n === 99) {
          const deps: StepDependencies = await ctx.dependencies();
          const parts: number[] = deps.results(Counted);
          seen.push({ n: item.n, parts, list: deps.result("list", Counted) });
          return parts.length;
        }
        return item.n * 2;
      },
      { clock, concurrency: 2 },
    );
    const workflow = await client.enqueueWorkflow("dynamic", {
      list: step(Counted, { n: 0 }),
      report: step(Counted, { n: 99 }, { after: ["list"] }),
    });
    const summary = await worker.start();
    expect(added, "the added steps are not written before the success").to.equal(false);
    expect(summary).to.include({ succeeded: 5, stoppedBecause: "drained" });
    // report ran after the three parts: its dependencies are list (1) and the parts (20, 40, 60), all of the kind, in enqueue order.
    expect(seen).to.deep.equal([{ n: 99, parts: [1, 20, 40, 60], list: 1 }]);
    const record = await store.getWorkflow({ id: workflow.id });
    expect(record).to.include({ state: "succeeded", stepCount: 5 });
    expect(record!.steps.map((entry) => entry.step)).to.deep.equal(["list", "report", "part", "part", "part"]);
    expect(await client.waitFor(workflow)).to.deep.equal({ report: 4 });
    expect((await store.readDependencies({ jobId: workflow.steps.report.id })).map((dep) => dep.step)).to.deep.equal(["list", "part", "part", "part"]);
  });

  it("claims each step of a chain once, after the step before it is recorded, and sends no claim that cannot find the next", async () => {
    const claims: number[] = [];
    const counted = new Proxy(store, {
      get: (target, name) => {
        const method = (Reflect.get(target, name) as unknown as (...args: unknown[]) => Promise<unknown>).bind(target);
        if (name !== "claimBatch") return method;
        return async (...args: unknown[]) => {
          const jobs = (await method(...args)) as readonly unknown[];
          claims.push(jobs.length);
          return jobs;
        };
      },
    });
    const steps = Object.fromEntries(Array.from({ length: 20 }, (_, n) => [`s${n}`, step(Counted, { n }, n === 0 ? {} : { after: [`s${n - 1}`] })]));
    await client.enqueueWorkflow("chain", steps);
    const summary = await new TaskWorker(counted, async (item) => item.n, { clock, concurrency: 10 }).start();
    expect(summary).to.include({ succeeded: 20, stoppedBecause: "drained" });
    // One claim per step, then the one that finds the queue drained.
    expect(claims).to.deep.equal([...Array.from({ length: 20 }, () => 1), 0]);
  });

  it("drains a chain of steps with a batch worker, one step per batch as each becomes due", async () => {
    const steps = Object.fromEntries(Array.from({ length: 12 }, (_, n) => [`s${n}`, step(Counted, { n }, n === 0 ? {} : { after: [`s${n - 1}`] })]));
    const workflow = await client.enqueueWorkflow("batched-chain", steps);
    const worker = new BatchTaskWorker(store, async (entries, ctx) => entries.forEach((entry) => ctx.succeed(entry, entry.item.n)), {
      clock,
      concurrency: 10,
      batchSize: 5,
    });
    expect(await worker.start()).to.include({ succeeded: 12, stoppedBecause: "drained" });
    expect(worker.batches).to.deep.equal(Array.from({ length: 12 }, (_, n) => [n]));
    expect((await store.getWorkflow({ id: workflow.id }))?.state).to.equal("succeeded");
  });

  it("looks again after an empty claim that raced the success of a step, rather than ending the drain before its dependent runs", async () => {
    const workflow = await client.enqueueWorkflow("raced", { first: step(Counted, { n: 1 }), next: step(Counted, { n: 2 }, { after: ["first"] }) });
    await store.enqueueMany([buildNewJob(Counted, { n: 3 })]);
    const finishFirst = gate();
    let claims = 0;
    // The second claim (sent once the plain job is recorded, while `first` runs) finds nothing; its answer comes back
    // only after `first`'s success has been recorded, which made `next` due.
    const racing = new Proxy(store, {
      get: (target, name) => {
        const method = (Reflect.get(target, name) as unknown as (...args: unknown[]) => Promise<unknown>).bind(target);
        if (name !== "claimBatch") return method;
        return async (...args: unknown[]) => {
          const answer = await method(...args);
          claims += 1;
          if (claims === 2) {
            finishFirst.open();
            while ((await store.getJob({ id: workflow.steps.first.id }))?.state !== "succeeded") await settle();
            await settle();
          }
          return answer;
        };
      },
    });
    const worker = new TaskWorker(
      racing,
      async (item) => {
        if (item.n === 1) await finishFirst.opened;
        return item.n;
      },
      { clock, concurrency: 10 },
    );
    expect(await worker.start()).to.include({ succeeded: 3, stoppedBecause: "drained" });
    expect((await store.getJob({ id: workflow.steps.next.id }))?.state).to.equal("succeeded");
  });

  it("writes no added step when the handler fails, and the steps after it wait for its retry", async () => {
    let attempts = 0;
    const worker = new TaskWorker(
      store,
      async (item, ctx) => {
        if (item.n === 0) {
          attempts += 1;
          ctx.addSteps({ extra: step(Counted, { n: 5 }) });
          if (attempts === 1) throw new Error("the listing failed");
        }
        return item.n;
      },
      { clock },
    );
    const workflow = await client.enqueueWorkflow("retrying", { list: step(Counted, { n: 0 }), after: step(Counted, { n: 7 }, { after: ["list"] }) });
    expect(await worker.start()).to.include({ retried: 1 });
    expect((await store.getWorkflow({ id: workflow.id }))?.stepCount, "nothing added by the failed attempt").to.equal(2);
    expect((await store.getJob({ id: workflow.steps.after.id }))?.state).to.equal("blocked");
    await clock.advance(3_600_000);
    expect(await worker.start()).to.include({ succeeded: 3 });
    const record = await store.getWorkflow({ id: workflow.id });
    expect(record).to.include({ state: "succeeded", stepCount: 3 });
    expect(record!.steps.find((entry) => entry.step === "after")?.after).to.have.length(2);
  });
});
