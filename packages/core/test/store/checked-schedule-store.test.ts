import { expect } from "chai";
import { ConfigError, InvalidNameError, PayloadError } from "../../src/errors/config-errors";
import { defineJob } from "../../src/job/job-definition";
import { MAX_SCHEDULE_GRACE_MS, MAX_SCHEDULES_PER_FIRE, MIN_SCHEDULE_GRACE_MS } from "../../src/limits";
import { defineSchedule } from "../../src/schedule/define-schedule";
import { CheckedScheduleStore, checkedScheduleStore } from "../../src/store/checked-schedule-store";
import type { FireDueSchedulesParams, ScheduleRecord, ScheduleSpec, SyncSchedulesParams, UpsertScheduleParams } from "../../src/store/schedule-store";
import { recordingStore, refusal } from "../support/recording-store";

const Report = defineJob<{ kind: string }>("report");
const { spec } = defineSchedule({ name: "nightly", job: Report, cron: "0 2 * * *", payload: { kind: "revenue" } });
const firstRunAt = (_spec: ScheduleSpec, now: Date): Date => now;
const DAY = 86_400_000;
const record: ScheduleRecord = { ...spec, origin: "code", declaredAt: new Date(0), nextRunAt: new Date(0), lastFiredAt: null, updatedAt: new Date(0) };

describe("CheckedScheduleStore", () => {
  it("hands valid schedules to the store, with a firstRunAt that answers as the given one does", async () => {
    const { store, calls } = recordingStore();
    await new CheckedScheduleStore(store).syncSchedules({ schedules: [spec], firstRunAt });
    expect(calls.map((call) => call.method)).to.deep.equal(["syncSchedules"]);
    const given = calls[0]!.args[0] as SyncSchedulesParams;
    expect(given.schedules).to.deep.equal([spec]);
    expect(given.firstRunAt(spec, new Date(5))).to.deep.equal(new Date(5));
  });

  it("refuses a name given twice, a bad name and a payload over the ceiling before the store sees them", async () => {
    const { store, calls } = recordingStore();
    const checked = new CheckedScheduleStore(store, { maxPayloadBytes: 16 });
    const twice = await refusal(new CheckedScheduleStore(store).syncSchedules({ schedules: [spec, { ...spec, cron: "0 3 * * *" }], firstRunAt }));
    expect(twice).to.be.instanceOf(ConfigError).with.property("option", "schedules");
    expect(twice.message).to.contain('"nightly" is given twice');
    expect(await refusal(checked.syncSchedules({ schedules: [{ ...spec, name: "Night ly" }], firstRunAt }))).to.be.instanceOf(InvalidNameError);
    expect(await refusal(checked.syncSchedules({ schedules: [spec], firstRunAt })))
      .to.be.instanceOf(PayloadError)
      .and.include({ limitBytes: 16 });
    expect(await refusal(checked.syncSchedules({ schedules: [{ ...spec, maxAttempts: 0 }], firstRunAt: null as never }))).to.be.instanceOf(ConfigError);
    expect(calls).to.deep.equal([]);
  });

  it("fails a call whose firstRunAt answers something other than a valid Date, naming the schedule", async () => {
    const { store, calls } = recordingStore();
    await new CheckedScheduleStore(store).upsertSchedule({ schedule: spec, firstRunAt: () => new Date(Number.NaN) });
    const given = calls[0]!.args[0] as UpsertScheduleParams;
    expect(() => given.firstRunAt(spec, new Date())).to.throw(ConfigError, /`firstRunAt`: must return a valid Date, got Invalid Date for schedule "nightly"/);
  });

  it("refuses a runtime schedule with a bad name, payload or callback, and a removal of a name no schedule can have", async () => {
    const { store, calls } = recordingStore();
    const checked = new CheckedScheduleStore(store, { maxPayloadBytes: 16 });
    expect(await refusal(checked.upsertSchedule({ schedule: { ...spec, queue: "Bad Queue" }, firstRunAt }))).to.be.instanceOf(InvalidNameError);
    expect(await refusal(checked.upsertSchedule({ schedule: spec, firstRunAt }))).to.be.instanceOf(PayloadError);
    expect(await refusal(new CheckedScheduleStore(store).upsertSchedule({ schedule: spec, firstRunAt: "soon" as never })))
      .to.be.instanceOf(ConfigError)
      .with.property("option", "firstRunAt");
    expect(await refusal(checked.removeSchedule({ name: "" }))).to.be.instanceOf(InvalidNameError);
    expect(calls).to.deep.equal([]);
    await checked.removeSchedule({ name: "nightly" });
    expect(calls).to.deep.equal([{ method: "removeSchedule", args: [{ name: "nightly" }] }]);
  });

  it("refuses a fire limit outside 1 to MAX_SCHEDULES_PER_FIRE and a grace outside a minute to a year", async () => {
    const { store, calls } = recordingStore();
    const checked = new CheckedScheduleStore(store);
    const plan = () => ({ fires: [], nextRunAt: new Date() });
    for (const limit of [0, MAX_SCHEDULES_PER_FIRE + 1, 2.5]) {
      expect(await refusal(checked.fireDueSchedules({ limit, plan, graceMs: DAY })), String(limit))
        .to.be.instanceOf(ConfigError)
        .with.property("option", "limit");
    }
    for (const graceMs of [MIN_SCHEDULE_GRACE_MS - 1, MAX_SCHEDULE_GRACE_MS + 1, Number.NaN, undefined]) {
      expect(await refusal(checked.fireDueSchedules({ limit: 1, plan, graceMs: graceMs as number })), String(graceMs))
        .to.be.instanceOf(ConfigError)
        .with.property("option", "graceMs");
    }
    await checked.fireDueSchedules({ limit: MAX_SCHEDULES_PER_FIRE, plan, graceMs: MIN_SCHEDULE_GRACE_MS });
    expect(calls.map((call) => call.method)).to.deep.equal(["fireDueSchedules"]);
    expect(calls[0]!.args[0]).to.include({ limit: MAX_SCHEDULES_PER_FIRE, graceMs: MIN_SCHEDULE_GRACE_MS });
  });

  it("fails a tick whose plan answers a next run that is not after the store's now, or fires that are not Dates", async () => {
    const { store, calls } = recordingStore();
    const now = new Date("2030-01-01T00:00:00Z");
    const answers = [{ fires: [], nextRunAt: now }, { fires: ["soon"], nextRunAt: new Date(now.getTime() + 1) }, null];
    const checked = new CheckedScheduleStore(store);
    for (const answer of answers) {
      await checked.fireDueSchedules({ limit: 1, graceMs: DAY, plan: () => answer as never });
      const { plan } = calls.at(-1)!.args[0] as FireDueSchedulesParams;
      expect(() => plan(record, now), JSON.stringify(answer)).to.throw(ConfigError, /plan\("nightly"\)/);
    }
    await checked.fireDueSchedules({ limit: 1, graceMs: DAY, plan: () => ({ fires: [now], nextRunAt: new Date(now.getTime() + 1) }) });
    const { plan } = calls.at(-1)!.args[0] as FireDueSchedulesParams;
    expect(plan(record, now).fires).to.deep.equal([now]);
  });

  it("wraps a store once", () => {
    const { store } = recordingStore();
    const checked = checkedScheduleStore(store);
    expect(checked).to.be.instanceOf(CheckedScheduleStore);
    expect(checkedScheduleStore(checked)).to.equal(checked);
  });
});
