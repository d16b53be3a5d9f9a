import { expect } from "chai";
import { ConfigError, InvalidNameError, PayloadError } from "../../src/errors/config-errors";
import { defineJob } from "../../src/job/job-definition";
import { MAX_SCHEDULES_PER_FIRE } from "../../src/limits";
import { defineSchedule } from "../../src/schedule/define-schedule";
import { CheckedScheduleStore } from "../../src/store/checked-schedule-store";
import type { ScheduleSpec } from "../../src/store/schedule-store";
import { recordingStore, refusal } from "../support/recording-store";

const Report = defineJob<{ kind: string }>("report");
const { spec } = defineSchedule({ name: "nightly", job: Report, cron: "0 2 * * *", payload: { kind: "revenue" } });
const firstRunAt = (_spec: ScheduleSpec, now: Date): Date => now;

describe("CheckedScheduleStore", () => {
  it("hands valid schedules to the store", async () => {
    const { store, calls } = recordingStore();
    await new CheckedScheduleStore(store).syncSchedules({ schedules: [spec], firstRunAt });
    expect(calls).to.have.length(1);
    expect(calls[0]!.args[0]).to.deep.equal({ schedules: [spec], firstRunAt });
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

  it("refuses a fire limit outside 1 to MAX_SCHEDULES_PER_FIRE", async () => {
    const { store, calls } = recordingStore();
    const checked = new CheckedScheduleStore(store);
    const plan = () => ({ fires: [], nextRunAt: new Date() });
    for (const limit of [0, MAX_SCHEDULES_PER_FIRE + 1, 2.5]) {
      expect(await refusal(checked.fireDueSchedules({ limit, plan })), String(limit))
        .to.be.instanceOf(ConfigError)
        .with.property("option", "limit");
    }
    await checked.fireDueSchedules({ limit: MAX_SCHEDULES_PER_FIRE, plan });
    expect(calls.map((call) => call.method)).to.deep.equal(["fireDueSchedules"]);
  });
});
