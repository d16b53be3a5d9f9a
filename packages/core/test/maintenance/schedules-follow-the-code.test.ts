import { expect } from "chai";
import { defineJob } from "../../src/job/job-definition";
import { ScheduleDeclarer } from "../../src/maintenance/schedule-declarer";
import { ScheduleTicker } from "../../src/maintenance/schedule-ticker";
import { defineSchedule, type ScheduleDefinition } from "../../src/schedule/define-schedule";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const GRACE = 2 * HOUR;

const Ping = defineJob<{ version: number }>("ping");
const everyMinute = (name: string, version = 1): ScheduleDefinition => defineSchedule({ name, job: Ping, cron: "* * * * *", payload: { version } });

/** One process of the application: it declares its schedules at start and keeps declaring them until it stops. */
interface RunningProcess {
  stop(): Promise<void>;
}

describe("schedules follow the code (on a manual clock)", () => {
  let clock: ManualClock;
  let store: InMemoryJobStore;
  let ticker: ScheduleTicker;
  /** Per schedule name, the minutes (since the test's start) in which a tick enqueued a fire. */
  let fired: Map<string, number[]>;
  let started: number;

  beforeEach(() => {
    clock = new ManualClock(Date.UTC(2030, 0, 1, 0, 0, 30));
    store = new InMemoryJobStore({ clock });
    ticker = new ScheduleTicker(store, { graceMs: GRACE });
    fired = new Map();
    started = clock.now();
  });

  async function start(definitions: readonly ScheduleDefinition[]): Promise<RunningProcess> {
    const declarer = new ScheduleDeclarer(store, definitions, { graceMs: GRACE, clock });
    const stop = new AbortController();
    await declarer.declare();
    const running = declarer.run(stop.signal);
    return {
      stop: async () => {
        stop.abort();
        await running;
      },
    };
  }

  /** Lets `minutes` pass, the leader ticking once a minute as the maintenance loop would. */
  async function tickFor(minutes: number): Promise<void> {
    for (let minute = 0; minute < minutes; minute += 1) {
      await clock.advance(MINUTE);
      for (const fire of await ticker.tick()) {
        const at = Math.round((clock.now() - started) / MINUTE);
        fired.set(fire.schedule, [...(fired.get(fire.schedule) ?? []), at]);
      }
    }
  }

  const firesOf = (name: string, from: number, to: number): number => (fired.get(name) ?? []).filter((at) => at > from && at <= to).length;

  it("declares again every quarter of the grace, at most hourly", () => {
    expect(new ScheduleDeclarer(store, [], { graceMs: GRACE }).everyMs).to.equal(30 * MINUTE);
    expect(new ScheduleDeclarer(store, [], { graceMs: 6 * HOUR }).everyMs).to.equal(HOUR);
    expect(new ScheduleDeclarer(store, []).everyMs, "with the default day").to.equal(HOUR);
  });

  it("stops firing a schedule removed from the code a grace after the restarted process stopped declaring it", async () => {
    const before = await start([everyMinute("kept"), everyMinute("removed")]);
    await tickFor(30);
    expect(firesOf("removed", 0, 30)).to.equal(30);

    // A deploy: the process restarts with code that no longer declares `removed`.
    await before.stop();
    const lastDeclaredAt = (await store.listSchedules()).find((schedule) => schedule.name === "removed")!.declaredAt.getTime();
    const after = await start([everyMinute("kept")]);
    await tickFor((2 * GRACE) / MINUTE);

    const expiredAt = Math.round((lastDeclaredAt + GRACE - started) / MINUTE);
    expect(firesOf("removed", 30, expiredAt - 1), "until the grace runs out").to.equal(expiredAt - 1 - 30);
    expect(firesOf("removed", expiredAt, 30 + (2 * GRACE) / MINUTE), "after the grace").to.equal(0);
    expect(firesOf("kept", 0, 30 + (2 * GRACE) / MINUTE), "the declared one, every minute").to.equal(30 + (2 * GRACE) / MINUTE);
    const removed = (await store.listSchedules()).find((schedule) => schedule.name === "removed");
    expect(removed, "an expired schedule stays listed until someone removes it").to.include({ origin: "code" });
    await after.stop();
  });

  it("keeps firing every schedule some running version declares during a slow rolling deploy, and stops the old one's a grace after it is gone", async () => {
    const oldVersion = await start([everyMinute("shared"), everyMinute("old-only")]);
    await tickFor(10);
    const newVersion = await start([everyMinute("shared"), everyMinute("new-only")]);
    // Both versions run side by side for three graces.
    await tickFor((3 * GRACE) / MINUTE);
    const rolled = 10 + (3 * GRACE) / MINUTE;
    expect(firesOf("shared", 0, rolled)).to.equal(rolled);
    expect(firesOf("old-only", 0, rolled)).to.equal(rolled);
    expect(firesOf("new-only", 10, rolled)).to.equal(rolled - 10);

    await oldVersion.stop();
    await tickFor((2 * GRACE) / MINUTE);
    const end = rolled + (2 * GRACE) / MINUTE;
    expect(firesOf("shared", rolled, end)).to.equal(end - rolled);
    expect(firesOf("new-only", rolled, end)).to.equal(end - rolled);
    expect(firesOf("old-only", rolled + GRACE / MINUTE, end), "a grace after the old version stopped").to.equal(0);
    await newVersion.stop();
  });

  it("never lets the schedules of a process that crashed and came back within the grace expire", async () => {
    const first = await start([everyMinute("steady")]);
    await tickFor(5);
    await first.stop();
    // Down for most of a grace while another process leads and ticks.
    await tickFor(GRACE / MINUTE - 30);
    const again = await start([everyMinute("steady")]);
    await tickFor((2 * GRACE) / MINUTE);
    const end = 5 + GRACE / MINUTE - 30 + (2 * GRACE) / MINUTE;
    expect(firesOf("steady", 0, end)).to.equal(end);
    await again.stop();
  });

  it("writes the newest declaration of a changed schedule, and the new version's once the old version is gone", async () => {
    const oldVersion = await start([everyMinute("report", 1)]);
    const newVersion = await start([defineSchedule({ name: "report", job: Ping, cron: "*/5 * * * *", payload: { version: 2 } })]);
    const stored = async () => (await store.listSchedules()).find((schedule) => schedule.name === "report")!;
    expect(await stored()).to.include({ cron: "*/5 * * * *", payloadJson: '{"version":2}' });

    await oldVersion.stop();
    await tickFor(GRACE / 4 / MINUTE);
    expect(await stored()).to.include({ cron: "*/5 * * * *", payloadJson: '{"version":2}' });
    await tickFor(60);
    expect(firesOf("report", GRACE / 4 / MINUTE, GRACE / 4 / MINUTE + 60), "every five minutes").to.equal(12);
    await newVersion.stop();
  });
});
