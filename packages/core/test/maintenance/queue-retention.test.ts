import { expect } from "chai";
import { QueueAdmin } from "../../src/client/queue-admin";
import { ConfigError } from "../../src/errors/config-errors";
import { buildNewJob } from "../../src/job/enqueue-options";
import { defineJob } from "../../src/job/job-definition";
import { planRetention } from "../../src/maintenance/queue-retention-plan";
import { RetentionPruner } from "../../src/maintenance/retention-pruner";
import type { QueueControls, QueueRetention } from "../../src/queue/queue-controls";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";

const DAY = 86_400_000;
const GLOBAL = { succeeded: 7 * DAY, cancelled: 7 * DAY, dead: 30 * DAY };

function controls(queue: string, retention: Partial<QueueRetention>): QueueControls {
  return {
    queue,
    paused: false,
    maxRunning: null,
    maxRunningPerGroup: null,
    rateLimit: null,
    retention: { succeededDays: null, deadDays: null, cancelledDays: null, ...retention },
    updatedAt: new Date(0),
  };
}

describe("planRetention: the passes of the global retention and each queue's own", () => {
  it("is the global passes alone when no queue has days of its own", () => {
    expect(planRetention(GLOBAL, [controls("paused-only", {})])).to.deep.equal([
      { states: ["succeeded", "cancelled"], olderThanMs: 7 * DAY },
      { states: ["dead"], olderThanMs: 30 * DAY },
    ]);
  });

  it("leaves a queue that keeps a state longer out of that state's global pass, and gives it passes of its own", () => {
    expect(planRetention(GLOBAL, [controls("audit", { deadDays: 365 })])).to.deep.equal([
      { states: ["succeeded", "cancelled"], olderThanMs: 7 * DAY },
      { states: ["dead"], olderThanMs: 30 * DAY, exceptQueues: ["audit"] },
      { states: ["dead"], olderThanMs: 365 * DAY, queues: ["audit"] },
    ]);
  });

  it("adds a pass limited to a queue that keeps a state shorter, and keeps it in the global pass", () => {
    expect(planRetention(GLOBAL, [controls("thumbs", { succeededDays: 1, cancelledDays: 0 })])).to.deep.equal([
      { states: ["succeeded", "cancelled"], olderThanMs: 7 * DAY },
      { states: ["succeeded"], olderThanMs: 1 * DAY, queues: ["thumbs"] },
      { states: ["cancelled"], olderThanMs: 0, queues: ["thumbs"] },
      { states: ["dead"], olderThanMs: 30 * DAY },
    ]);
  });

  it("gives a queue left out of a shared pass for one state a pass at the global days for the other", () => {
    expect(planRetention(GLOBAL, [controls("audit", { succeededDays: 20 })])).to.deep.equal([
      { states: ["succeeded", "cancelled"], olderThanMs: 7 * DAY, exceptQueues: ["audit"] },
      { states: ["succeeded"], olderThanMs: 20 * DAY, queues: ["audit"] },
      { states: ["cancelled"], olderThanMs: 7 * DAY, queues: ["audit"] },
      { states: ["dead"], olderThanMs: 30 * DAY },
    ]);
  });
});

describe("RetentionPruner with queue settings (in-memory store, manual clock)", () => {
  it("prunes each queue by its own days, and the others by the global ones", async () => {
    const clock = new ManualClock();
    const store = new InMemoryJobStore({ clock });
    const admin = new QueueAdmin(store);
    await admin.retain("audit", { succeededDays: 20 });
    await admin.retain("thumbs", { succeededDays: 1 });
    const ids: Record<string, string> = {};
    for (const queue of ["mail", "audit", "thumbs"]) {
      const { id } = await store.enqueue(buildNewJob(defineJob<object>(queue), {}));
      const [job] = await store.claimBatch({ queue, workerId: "w", limit: 1, leaseMs: 60_000 });
      await store.completeJobs({ workerId: "w", jobs: [{ id, attempt: job!.attempt, resultJson: null, durationMs: 1 }] });
      ids[queue] = id;
    }
    const pruner = new RetentionPruner(store);
    const alive = async () => Promise.all(["mail", "audit", "thumbs"].map(async (queue) => (await store.getJob({ id: ids[queue]! })) !== undefined));

    await clock.advance(2 * DAY);
    await pruner.runOnce();
    expect(await alive()).to.deep.equal([true, true, false]);
    await clock.advance(6 * DAY);
    await pruner.runOnce();
    expect(await alive()).to.deep.equal([false, true, false]);
    await clock.advance(13 * DAY);
    expect(await pruner.runOnce()).to.match(/^pruned 1 succeeded\/cancelled and 0 dead jobs/);
    expect(await alive()).to.deep.equal([false, false, false]);
  });

  it("refuses a queue setting it could not honour, naming the setting", async () => {
    const admin = new QueueAdmin(new InMemoryJobStore());
    const refusals: [Record<string, unknown>, string][] = [
      [{ deadDays: -1 }, "retention.deadDays"],
      [{ succeededDays: 1.5 }, "retention.succeededDays"],
      [{ cancelledDays: 36_501 }, "retention.cancelledDays"],
      [{ keepDays: 3 }, "retention.keepDays"],
    ];
    for (const [retention, option] of refusals) {
      const refused = await admin.retain("audit", retention).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused, option).to.be.instanceOf(ConfigError).with.property("option", option);
    }
    expect(await admin.controls(), "nothing was written").to.deep.equal([]);
  });
});
