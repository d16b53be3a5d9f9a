import { expect } from "chai";
import { ConfigError } from "../../src/errors/config-errors";
import { defineJob } from "../../src/job/job-definition";
import { createSilentLogger } from "../../src/logging/create-logger";
import { runWorkers } from "../../src/runtime/run-workers";
import { defineSchedule } from "../../src/schedule/define-schedule";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";

const DAY = 86_400_000;
const Ping = defineJob<{ n: number }>("ping");
const dueAMinuteAgo = (_spec: unknown, now: Date): Date => new Date(now.getTime() - 60_000);

describe("runWorkers with schedules", () => {
  it("in once mode declares the code's schedules and fires the live ones, not one the code stopped declaring a grace ago", async () => {
    const clock = new ManualClock(new Date("2030-05-01T12:00:30Z"));
    const store = new InMemoryJobStore({ clock });
    const removed = defineSchedule({ name: "removed", job: Ping, cron: "* * * * *", payload: { n: 1 } });
    await store.syncSchedules({ schedules: [removed.spec], firstRunAt: dueAMinuteAgo });
    await clock.advance(2 * DAY);
    await store.upsertSchedule({ schedule: { ...removed.spec, name: "made-at-run-time" }, firstRunAt: dueAMinuteAgo });
    const declared = defineSchedule({ name: "declared", job: Ping, cron: "* * * * *", payload: { n: 2 } });

    const report = await runWorkers({
      workers: [],
      mode: "once",
      store,
      log: createSilentLogger(),
      schedules: { store, definitions: [declared], graceMs: DAY },
    });

    expect(report.maintenance).to.include("enqueued 1 scheduled job");
    const byName = new Map((await store.listSchedules()).map((schedule) => [schedule.name, schedule]));
    expect(byName.get("declared")).to.include({ origin: "code" });
    expect(byName.get("declared")!.declaredAt.getTime()).to.equal(clock.now());
    expect(byName.get("made-at-run-time")!.lastFiredAt).to.not.equal(null);
    expect(byName.get("removed")!.lastFiredAt).to.equal(null);
  });

  it("refuses a grace outside a minute to a year before anything runs, naming the option", async () => {
    const store = new InMemoryJobStore();
    const error = await runWorkers({ workers: [], mode: "once", store, log: createSilentLogger(), schedules: { store, definitions: [], graceMs: 1_000 } }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).to.be.instanceOf(ConfigError).with.property("option", "schedules.graceMs");
  });
});
