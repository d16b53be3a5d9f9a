import { expect } from "chai";
import { container } from "tsyringe";
import { z } from "zod";
import { ScheduleClient } from "../../src/client/schedule-client";
import { SCHEDULE_STORE } from "../../src/di/tokens";
import { ConfigError, PayloadSchemaError } from "../../src/errors/config-errors";
import { ErrorCode } from "../../src/errors/error-codes";
import { errorCodeOf } from "../../src/errors/stint-error";
import { defineJob } from "../../src/job/job-definition";
import { defineSchedule } from "../../src/schedule/define-schedule";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { refusal } from "../support/recording-store";

const SendDigest = defineJob("send-digest", { maxAttempts: 4, schema: z.object({ tenantId: z.number().int().positive() }) });

describe("ScheduleClient", () => {
  let clock: ManualClock;
  let store: InMemoryJobStore;
  let schedules: ScheduleClient;

  beforeEach(() => {
    clock = new ManualClock(new Date("2030-03-04T07:59:30Z"));
    store = new InMemoryJobStore({ clock });
    schedules = new ScheduleClient(store);
  });

  it("creates a runtime schedule from a job kind, cron, time zone and payload, with the kind's job settings", async () => {
    const { schedule, created } = await schedules.upsert({
      name: "digest.tenant-42",
      job: SendDigest,
      cron: "0 9 * * *",
      timeZone: "Europe/Berlin",
      payload: { tenantId: 42 },
    });
    expect(created).to.equal(true);
    expect(schedule).to.include({ name: "digest.tenant-42", queue: "send-digest", origin: "runtime", maxAttempts: 4, timeZone: "Europe/Berlin" });
    expect(schedule.nextRunAt.toISOString()).to.equal("2030-03-04T08:00:00.000Z");
    expect(JSON.parse(schedule.payloadJson)).to.deep.equal({ tenantId: 42 });
    expect(await schedules.list()).to.deep.equal([schedule]);
  });

  it("changes it in place: the newest definition wins, the next run is kept while the cron stays", async () => {
    const first = await schedules.upsert({ name: "digest.tenant-42", job: SendDigest, cron: "0 9 * * *", payload: { tenantId: 42 } });
    const second = await schedules.upsert({ name: "digest.tenant-42", job: SendDigest, cron: "0 9 * * *", payload: { tenantId: 43 }, catchUp: 3 });
    expect(second.created).to.equal(false);
    expect(second.schedule).to.include({ catchUp: 3 });
    expect(second.schedule.nextRunAt).to.deep.equal(first.schedule.nextRunAt);
    expect(JSON.parse(second.schedule.payloadJson)).to.deep.equal({ tenantId: 43 });
  });

  it("refuses a bad cron, time zone or name, and a payload its kind's schema rejects, writing nothing", async () => {
    const bad = [
      schedules.upsert({ name: "digest", job: SendDigest, cron: "61 * * * *", payload: { tenantId: 1 } }),
      schedules.upsert({ name: "digest", job: SendDigest, cron: "0 9 * * *", timeZone: "Mars/Olympus", payload: { tenantId: 1 } }),
      schedules.upsert({ name: "Digest Daily", job: SendDigest, cron: "0 9 * * *", payload: { tenantId: 1 } }),
    ];
    expect(await refusal(bad[0]!))
      .to.be.instanceOf(ConfigError)
      .with.property("option", "cron");
    expect(await refusal(bad[1]!))
      .to.be.instanceOf(ConfigError)
      .with.property("option", "timeZone");
    expect(errorCodeOf(await refusal(bad[2]!))).to.equal(ErrorCode.InvalidName);
    const schema = await refusal(schedules.upsert({ name: "digest", job: SendDigest, cron: "0 9 * * *", payload: { tenantId: -1 } }));
    expect(schema).to.be.instanceOf(PayloadSchemaError);
    expect(schema.message).to.contain("payload.tenantId");
    expect(await schedules.list()).to.deep.equal([]);
  });

  it("refuses the name of a schedule the code declares, naming what to do", async () => {
    await store.syncSchedules({
      schedules: [defineSchedule({ name: "weekly-report", job: SendDigest, cron: "0 6 * * 1", payload: { tenantId: 1 } }).spec],
      firstRunAt: (_spec, now) => now,
    });
    const error = await refusal(schedules.upsert({ name: "weekly-report", job: SendDigest, cron: "0 7 * * 1", payload: { tenantId: 1 } }));
    expect(errorCodeOf(error)).to.equal(ErrorCode.ScheduleConflict);
    expect(error.message).to.contain('schedule "weekly-report" is declared in the application\'s code');
    expect((await schedules.list())[0]).to.include({ origin: "code", cron: "0 6 * * 1" });
  });

  it("removes a schedule, answering whether there was one", async () => {
    await schedules.upsert({ name: "digest.tenant-42", job: SendDigest, cron: "0 9 * * *", payload: { tenantId: 42 } });
    expect(await schedules.remove("digest.tenant-42")).to.equal(true);
    expect(await schedules.remove("digest.tenant-42")).to.equal(false);
    expect(await schedules.list()).to.deep.equal([]);
  });

  it("is resolved from a container with the registered schedule store", async () => {
    const child = container.createChildContainer();
    child.registerInstance(SCHEDULE_STORE, store);
    await child.resolve(ScheduleClient).upsert({ name: "digest.tenant-7", job: SendDigest, cron: "0 9 * * *", payload: { tenantId: 7 } });
    expect((await store.listSchedules()).map((schedule) => schedule.name)).to.deep.equal(["digest.tenant-7"]);
  });
});
