import { expect } from "chai";
import { ConfigError } from "../../src/errors/config-errors";
import { InfrastructureError } from "../../src/errors/infrastructure-error";
import { defineJob } from "../../src/job/job-definition";
import { ScheduleDeclarer } from "../../src/maintenance/schedule-declarer";
import { defineSchedule } from "../../src/schedule/define-schedule";
import type { ScheduleStore, SyncSchedulesParams } from "../../src/store/schedule-store";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { capturingLogger, type CapturedLine } from "../support/capturing-logger";
import { recordingStore } from "../support/recording-store";

const Report = defineJob<{ kind: string }>("report");
const Nightly = defineSchedule({ name: "nightly", job: Report, cron: "0 2 * * *", payload: { kind: "revenue" } });
const MINUTE = 60_000;

describe("ScheduleDeclarer", () => {
  it("refuses a grace outside a minute to a year, naming it", () => {
    expect(() => new ScheduleDeclarer(new InMemoryJobStore(), [], { graceMs: 59_999 }))
      .to.throw(ConfigError)
      .with.property("option", "graceMs");
  });

  it("asks nothing of the store when the code declares no schedule", async () => {
    const { store, calls } = recordingStore();
    const declarer = new ScheduleDeclarer(store, [], { clock: new ManualClock() });
    expect(await declarer.declare()).to.deep.equal({ conflicts: [] });
    await declarer.run(new AbortController().signal);
    expect(calls).to.deep.equal([]);
  });

  it("leaves a name a runtime schedule holds to it, with a warning that says what to do", async () => {
    const store = new InMemoryJobStore();
    await store.upsertSchedule({ schedule: { ...Nightly.spec, cron: "0 3 * * *" }, firstRunAt: (_spec, now) => now });
    const lines: CapturedLine[] = [];
    const result = await new ScheduleDeclarer(store, [Nightly], { log: capturingLogger(lines) }).declare();
    expect(result.conflicts).to.deep.equal(["nightly"]);
    expect((await store.listSchedules())[0]).to.include({ origin: "runtime", cron: "0 3 * * *" });
    expect(lines.map((line) => line.level)).to.deep.equal(["warn"]);
    expect(lines[0]!.message).to.contain('schedule "nightly" was created at run time').and.contain("stint schedules remove nightly");
  });

  it("declares again every interval until stopped, logging a failed declaration and trying at the next", async () => {
    const clock = new ManualClock();
    const lines: CapturedLine[] = [];
    const declared: number[] = [];
    let failNext = false;
    const store = {
      syncSchedules: (params: SyncSchedulesParams) => {
        if (failNext) {
          failNext = false;
          return Promise.reject(new InfrastructureError("syncSchedules failed: connection terminated"));
        }
        declared.push(clock.now());
        expect(params.schedules).to.deep.equal([Nightly.spec]);
        return Promise.resolve({ conflicts: [] });
      },
    } as unknown as ScheduleStore;
    const declarer = new ScheduleDeclarer(store, [Nightly], { graceMs: 8 * MINUTE, clock, log: capturingLogger(lines) });
    expect(declarer.everyMs).to.equal(2 * MINUTE);
    const stop = new AbortController();
    const running = declarer.run(stop.signal);
    await clock.advance(2 * MINUTE);
    failNext = true;
    await clock.advance(2 * MINUTE);
    await clock.advance(2 * MINUTE);
    stop.abort();
    await running;
    await clock.advance(10 * MINUTE);
    const start = clock.now() - 16 * MINUTE;
    expect(declared.map((at) => (at - start) / MINUTE)).to.deep.equal([2, 6]);
    expect(lines.map((line) => `${line.level}: ${line.message}`)).to.deep.equal([
      "warn: Could not declare the schedules again (next try in 120000 ms): syncSchedules failed: connection terminated",
    ]);
  });
});
