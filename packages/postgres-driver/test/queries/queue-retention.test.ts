import { RetentionPruner } from "@stint/core/driver";
import { expect } from "chai";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { finishJobs, HistoryDays } from "./history-days";

/** One finished job of a test: its queue, how it finished, how many days ago, and whether a pass must keep it. */
interface Case {
  readonly queue: string;
  readonly how: "succeeded" | "dead" | "cancelled";
  readonly daysAgo: number;
  readonly kept: boolean;
}

describe("per-queue retention of the partitioned history (the pruner with queue settings)", () => {
  let test: TestSchema;
  let days: HistoryDays;

  beforeEach(async () => {
    test = await createTestSchema();
    days = new HistoryDays(test);
    await days.make(40, 1);
  });
  afterEach(async () => {
    await test.drop();
  });

  /** Finishes and backdates every case's job; returns the cases with their job ids. */
  async function finish(cases: readonly Case[]): Promise<(Case & { readonly id: string })[]> {
    const made: (Case & { readonly id: string })[] = [];
    for (const item of cases) {
      const [id] = await finishJobs(test.store, item.queue, item.how, 1);
      if (item.daysAgo > 0) await days.backdate([id!], item.daysAgo);
      made.push({ ...item, id: id! });
    }
    return made;
  }

  async function expectKept(cases: readonly (Case & { readonly id: string })[]): Promise<void> {
    const seen = await Promise.all(cases.map(async (item) => [item.queue, item.how, item.daysAgo, (await test.store.getJob({ id: item.id })) !== undefined]));
    expect(seen).to.deep.equal(cases.map((item) => [item.queue, item.how, item.daysAgo, item.kept]));
  }

  it("prunes each queue by its own days for succeeded, dead and cancelled jobs, longer and shorter than the global ones", async () => {
    await test.store.setQueueControls("audit", { retention: { succeededDays: 20, deadDays: 60, cancelledDays: 15 } });
    await test.store.setQueueControls("thumbs", { retention: { succeededDays: 2, deadDays: 4, cancelledDays: 0 } });
    await test.store.setQueueControls("mail", { retention: { deadDays: null } });
    const cases = await finish([
      // The global retention: succeeded and cancelled 7 days, dead 30.
      { queue: "mail", how: "succeeded", daysAgo: 10, kept: false },
      { queue: "mail", how: "succeeded", daysAgo: 3, kept: true },
      { queue: "mail", how: "cancelled", daysAgo: 10, kept: false },
      { queue: "mail", how: "dead", daysAgo: 35, kept: false },
      { queue: "mail", how: "dead", daysAgo: 10, kept: true },
      // Longer: kept through the drop of their day.
      { queue: "audit", how: "succeeded", daysAgo: 10, kept: true },
      { queue: "audit", how: "succeeded", daysAgo: 25, kept: false },
      { queue: "audit", how: "cancelled", daysAgo: 10, kept: true },
      { queue: "audit", how: "cancelled", daysAgo: 25, kept: false },
      { queue: "audit", how: "dead", daysAgo: 35, kept: true },
      { queue: "audit", how: "dead", daysAgo: 38, kept: true },
      // Shorter: deleted row by row from days the global pass keeps.
      { queue: "thumbs", how: "succeeded", daysAgo: 3, kept: false },
      { queue: "thumbs", how: "succeeded", daysAgo: 1, kept: true },
      { queue: "thumbs", how: "cancelled", daysAgo: 0, kept: false },
      { queue: "thumbs", how: "dead", daysAgo: 5, kept: false },
      { queue: "thumbs", how: "dead", daysAgo: 3, kept: true },
    ]);

    const report = await new RetentionPruner(test.store, { batchSize: 2 }).runOnce();
    expect(report).to.match(/^pruned 6 succeeded\/cancelled and 2 dead jobs/);
    await expectKept(cases);
    expect(await days.exists(await days.nameOf(10)), "the day of the global pass is dropped whole").to.equal(false);
    expect(await days.exists(await days.nameOf(35))).to.equal(false);
    const auditTen = cases.filter((item) => item.queue === "audit" && item.daysAgo === 10);
    for (const item of auditTen) expect(await days.partitionOf(item.id), `${item.how} of audit`).to.equal("finished_jobs_kept");
    expect(await days.attemptRows(cases.find((item) => item.queue === "audit" && item.how === "dead")!.id), "a kept job keeps its history").to.equal(1);

    expect(await new RetentionPruner(test.store).runOnce(), "nothing more to do").to.match(/^pruned 0 succeeded\/cancelled and 0 dead jobs/);
  });

  it("deletes a longer-kept queue's jobs from finished_jobs_kept once they are past its own days", async () => {
    await test.store.setQueueControls("audit", { retention: { succeededDays: 9 } });
    const [kept] = await finish([{ queue: "audit", how: "succeeded", daysAgo: 8, kept: true }]);
    await new RetentionPruner(test.store, { succeededDays: 5 }).runOnce();
    expect(await days.exists(await days.nameOf(8)), "its day went with the global pass").to.equal(false);
    expect(await days.partitionOf(kept!.id)).to.equal("finished_jobs_kept");
    await test.store.setQueueControls("audit", { retention: { succeededDays: 6 } });
    expect(await new RetentionPruner(test.store, { succeededDays: 5 }).runOnce()).to.match(/^pruned 1 succeeded/);
    expect(await test.store.getJob({ id: kept!.id })).to.equal(undefined);
  });

  it("goes back to the global days when a queue's setting is removed", async () => {
    await test.store.setQueueControls("audit", { retention: { succeededDays: 90 } });
    const cases = await finish([{ queue: "audit", how: "succeeded", daysAgo: 10, kept: true }]);
    await new RetentionPruner(test.store).runOnce();
    await expectKept(cases);
    const controls = await test.store.setQueueControls("audit", { retention: { succeededDays: null } });
    expect(controls.retention).to.deep.equal({ succeededDays: null, deadDays: null, cancelledDays: null });
    await new RetentionPruner(test.store).runOnce();
    await expectKept([{ ...cases[0]!, kept: false }]);
  });
});
