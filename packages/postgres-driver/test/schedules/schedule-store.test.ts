import { ConfigError } from "@stint/core";
import type { ScheduleRecord } from "@stint/core";
import type { ScheduleSpec } from "@stint/core/driver";
import { expect } from "chai";
import { sql } from "kysely";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { newJob, rejectionOf } from "@stint/core/testing";
import { DAY, dueAMinuteAgo, MINUTE, scheduleSpec, threeFiresThenAnHour } from "./schedule-fixtures";

describe("PostgresJobStore as a ScheduleStore", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema();
  });
  afterEach(async () => {
    await test.drop();
  });

  async function databaseNow(): Promise<Date> {
    const { rows } = await sql<{ now: Date }>`SELECT now() AS now`.execute(test.db);
    return rows[0]!.now;
  }

  async function schedule(name: string) {
    const found = (await test.store.listSchedules()).find((record) => record.name === name);
    if (found === undefined) throw new Error(`schedule ${name} is missing`);
    return found;
  }

  async function makeDue(name: string): Promise<void> {
    await sql`UPDATE ${sql.id(test.schema, "schedules")} SET next_run_at = now() - interval '1 minute'
      WHERE name = ${name}`.execute(test.db);
  }

  describe("syncSchedules", () => {
    it("stores new schedules with next_run_at from firstRunAt, given the database's time", async () => {
      const before = await databaseNow();
      const seen: Date[] = [];
      await test.store.syncSchedules({
        schedules: [scheduleSpec("b-report", { priority: 2, timeoutMs: 5_000, catchUp: 3 }), scheduleSpec("a-cleanup", { enabled: false })],
        firstRunAt: (_spec, now) => {
          seen.push(now);
          return new Date(now.getTime() + 5 * MINUTE);
        },
      });
      const after = await databaseNow();
      expect(seen).to.have.length(2);
      expect(seen[0]!.getTime()).to.be.within(before.getTime(), after.getTime());
      const records = await test.store.listSchedules();
      expect(records.map((record) => record.name)).to.deep.equal(["a-cleanup", "b-report"]);
      expect(records[1]).to.deep.include({
        name: "b-report",
        queue: "b-report-queue",
        cron: "* * * * *",
        timeZone: "UTC",
        payloadJson: '{"schedule": "b-report"}',
        catchUp: 3,
        enabled: true,
        priority: 2,
        maxAttempts: 3,
        timeoutMs: 5_000,
        lastFiredAt: null,
      });
      expect(records[1]!.nextRunAt.getTime()).to.equal(seen[0]!.getTime() + 5 * MINUTE);
      expect(records[0]!.enabled).to.equal(false);
    });

    it("keeps next_run_at when other settings change, and recomputes it when the cron or time zone does", async () => {
      const at = (minutes: number) => (_spec: ScheduleSpec, now: Date) => new Date(now.getTime() + minutes * MINUTE);
      await test.store.syncSchedules({ schedules: [scheduleSpec("s")], firstRunAt: at(5) });
      const original = await schedule("s");
      const edited = scheduleSpec("s", { payloadJson: '{"v":2}', priority: 7, enabled: false });
      await test.store.syncSchedules({ schedules: [edited], firstRunAt: at(50) });
      const changed = await schedule("s");
      expect(changed).to.include({ priority: 7, enabled: false, payloadJson: '{"v": 2}' });
      expect(changed.nextRunAt).to.deep.equal(original.nextRunAt);

      await test.store.syncSchedules({ schedules: [scheduleSpec("s", { cron: "*/5 * * * *" })], firstRunAt: at(30) });
      const newCron = await schedule("s");
      expect(newCron.nextRunAt.getTime() - original.nextRunAt.getTime()).to.be.within(24 * MINUTE, 26 * MINUTE);
      const newZone = scheduleSpec("s", { cron: "*/5 * * * *", timeZone: "Europe/Berlin" });
      await test.store.syncSchedules({ schedules: [newZone], firstRunAt: at(90) });
      expect((await schedule("s")).nextRunAt.getTime() - newCron.nextRunAt.getTime()).to.be.within(59 * MINUTE, 61 * MINUTE);
    });

    it("only stamps the declaration of a schedule whose spec did not change, and leaves schedules it was not given alone", async () => {
      await test.store.syncSchedules({ schedules: [scheduleSpec("kept"), scheduleSpec("other")], firstRunAt: dueAMinuteAgo });
      const first = await schedule("kept");
      const other = await schedule("other");
      await test.store.syncSchedules({ schedules: [scheduleSpec("kept")], firstRunAt: (_spec, now) => new Date(now.getTime() + MINUTE) });
      const again = await schedule("kept");
      expect(again.declaredAt.getTime()).to.be.at.least(first.declaredAt.getTime());
      expect({ ...again, declaredAt: first.declaredAt }).to.deep.equal(first);
      expect(await schedule("other")).to.deep.equal(other);
      expect((await test.store.listSchedules()).map((record) => record.name)).to.deep.equal(["kept", "other"]);
    });

    it("refuses two specs with one name before writing anything", async () => {
      const error = await rejectionOf(
        test.store.syncSchedules({ schedules: [scheduleSpec("x"), scheduleSpec("y"), scheduleSpec("x")], firstRunAt: dueAMinuteAgo }),
      );
      expect(error).to.be.instanceOf(ConfigError);
      expect(error.message).to.contain('"x"');
      expect(await test.store.listSchedules()).to.deep.equal([]);
    });
  });

  describe("fireDueSchedules", () => {
    it("enqueues each due fire with its dedupe key and the schedule's job settings, then advances next_run_at", async () => {
      await test.store.syncSchedules({
        schedules: [scheduleSpec("report", { priority: 4, maxAttempts: 7, timeoutMs: 9_000, payloadJson: '{"kind":"daily"}' })],
        firstRunAt: dueAMinuteAgo,
      });
      const { nextRunAt } = await schedule("report");
      const fires = await test.store.fireDueSchedules({ limit: 10, graceMs: DAY, plan: threeFiresThenAnHour });
      expect(fires.map((fire) => fire.fireAt.getTime())).to.deep.equal([2, 1, 0].map((n) => nextRunAt.getTime() - n * MINUTE));
      expect(fires.every((fire) => fire.schedule === "report" && !fire.duplicate)).to.equal(true);
      for (const fire of fires) {
        const job = await test.store.getJob({ id: fire.jobId });
        expect(job).to.include({ queue: "report-queue", priority: 4, maxAttempts: 7, timeoutMs: 9_000, state: "queued" });
        expect(job?.dedupeKey).to.equal(`schedule:report:${fire.fireAt.toISOString()}`);
        expect(job?.runAt).to.deep.equal(fire.fireAt);
        expect(job?.payload).to.deep.equal({ kind: "daily" });
      }
      const advanced = await schedule("report");
      expect(advanced.lastFiredAt).to.deep.equal(nextRunAt);
      expect(advanced.nextRunAt.getTime()).to.be.greaterThan(Date.now() + 50 * MINUTE);
      expect(await test.store.fireDueSchedules({ limit: 10, graceMs: DAY, plan: threeFiresThenAnHour })).to.deep.equal([]);
    });

    it("fires only enabled schedules that are due, oldest next_run_at first, at most limit of them", async () => {
      await test.store.syncSchedules({
        schedules: [scheduleSpec("older"), scheduleSpec("newer"), scheduleSpec("off", { enabled: false }), scheduleSpec("later")],
        firstRunAt: (spec, now) => new Date(now.getTime() + ({ older: -3, newer: -2, off: -5, later: 10 }[spec.name] ?? 0) * MINUTE),
      });
      const first = await test.store.fireDueSchedules({ limit: 1, graceMs: DAY, plan: threeFiresThenAnHour });
      expect(new Set(first.map((fire) => fire.schedule))).to.deep.equal(new Set(["older"]));
      const second = await test.store.fireDueSchedules({ limit: 10, graceMs: DAY, plan: threeFiresThenAnHour });
      expect(new Set(second.map((fire) => fire.schedule))).to.deep.equal(new Set(["newer"]));
      expect((await schedule("off")).lastFiredAt).to.equal(null);
    });

    it("reports a fire whose job is still active as a duplicate", async () => {
      await test.store.syncSchedules({ schedules: [scheduleSpec("dup")], firstRunAt: dueAMinuteAgo });
      const { nextRunAt } = await schedule("dup");
      const existing = await test.store.enqueue(newJob("dup-queue", {}, { dedupeKey: `schedule:dup:${nextRunAt.toISOString()}` }));
      const fires = await test.store.fireDueSchedules({ limit: 10, graceMs: DAY, plan: threeFiresThenAnHour });
      expect(fires.map((fire) => fire.duplicate)).to.deep.equal([false, false, true]);
      expect(fires[2]!.jobId).to.equal(existing.id);
    });

    it("writes nothing when plan throws or returns a next run that is not after now", async () => {
      await test.store.syncSchedules({ schedules: [scheduleSpec("a"), scheduleSpec("b")], firstRunAt: dueAMinuteAgo });
      const before = await test.store.listSchedules();
      const thrown = await rejectionOf(
        test.store.fireDueSchedules({
          limit: 10,
          graceMs: DAY,
          plan: (record, now) => {
            if (record.name === "b") throw new Error("bad cron");
            return threeFiresThenAnHour(record, now);
          },
        }),
      );
      expect(thrown.message).to.equal("bad cron");
      const stalePlan = (record: ScheduleRecord) => ({ fires: [], nextRunAt: record.nextRunAt });
      const stale = await rejectionOf(test.store.fireDueSchedules({ limit: 10, graceMs: DAY, plan: stalePlan }));
      expect(stale).to.be.instanceOf(ConfigError);
      expect(stale.message).to.contain("nextRunAt");
      expect(await test.store.listSchedules()).to.deep.equal(before);
      expect(await test.store.countByQueue()).to.deep.equal([]);
    });

    it("fires a schedule again once its next run is due", async () => {
      await test.store.syncSchedules({ schedules: [scheduleSpec("again")], firstRunAt: dueAMinuteAgo });
      await test.store.fireDueSchedules({ limit: 10, graceMs: DAY, plan: threeFiresThenAnHour });
      await makeDue("again");
      const second = await test.store.fireDueSchedules({ limit: 10, graceMs: DAY, plan: threeFiresThenAnHour });
      expect(second).to.have.length(3);
      expect((await test.store.countByQueue({ queues: ["again-queue"] }))[0]?.counts.queued).to.equal(6);
    });
  });
});
