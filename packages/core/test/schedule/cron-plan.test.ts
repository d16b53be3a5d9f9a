import { expect } from "chai";
import fc from "fast-check";
import { firstRunAt, parseCron, planFires } from "../../src/schedule/cron-plan";
import { defineSchedule } from "../../src/schedule/define-schedule";
import { defineJob } from "../../src/job/job-definition";
import { ConfigError, InvalidNameError } from "../../src/errors/config-errors";
import type { ScheduleRecord } from "../../src/store/schedule-store";

const Report = defineJob<{ kind: string }>("weekly-report", { maxAttempts: 3 });

function record(cron: string, nextRunAt: string, catchUp = 1, timeZone = "UTC"): ScheduleRecord {
  return {
    name: "s",
    queue: "q",
    cron,
    timeZone,
    payloadJson: "{}",
    catchUp,
    enabled: true,
    priority: 0,
    maxAttempts: 1,
    timeoutMs: null,
    origin: "code",
    declaredAt: new Date(nextRunAt),
    nextRunAt: new Date(nextRunAt),
    lastFiredAt: null,
    updatedAt: new Date(nextRunAt),
  };
}
const iso = (dates: readonly Date[]): string[] => dates.map((date) => date.toISOString());

describe("planFires", () => {
  it("enqueues only the latest missed fire after downtime by default", () => {
    const plan = planFires(record("0 * * * *", "2026-01-01T00:00:00Z"), new Date("2026-01-01T05:30:00Z"));
    expect(iso(plan.fires)).to.deep.equal(["2026-01-01T05:00:00.000Z"]);
    expect(plan.nextRunAt.toISOString()).to.equal("2026-01-01T06:00:00.000Z");
  });

  it("catches up a bounded number of missed fires, oldest first", () => {
    const plan = planFires(record("0 * * * *", "2026-01-01T00:00:00Z", 3), new Date("2026-01-01T05:30:00Z"));
    expect(iso(plan.fires)).to.deep.equal(["2026-01-01T03:00:00.000Z", "2026-01-01T04:00:00.000Z", "2026-01-01T05:00:00.000Z"]);
  });

  it("includes a fire exactly at now and never one before next_run_at", () => {
    const plan = planFires(record("*/5 * * * * *", "2026-01-01T00:00:10Z", 10), new Date("2026-01-01T00:00:10Z"));
    expect(iso(plan.fires)).to.deep.equal(["2026-01-01T00:00:10.000Z"]);
    expect(plan.nextRunAt.toISOString()).to.equal("2026-01-01T00:00:15.000Z");
  });

  it("reads the expression in the schedule's time zone", () => {
    const next = firstRunAt(record("0 9 * * 1", "2026-01-01T00:00:00Z", 1, "Europe/Berlin"), new Date("2026-01-01T00:00:00Z"));
    expect(next.toISOString()).to.equal("2026-01-05T08:00:00.000Z");
  });

  it("for every schedule state: fires are due, not before next_run_at, at most catchUp, and the next run is after now", () => {
    const base = Date.parse("2026-01-01T00:00:00Z");
    fc.assert(
      fc.property(
        fc.constantFrom("* * * * *", "*/7 * * * *", "0 */3 * * *", "30 2 * * *", "*/15 * * * * *"),
        fc.integer({ min: 0, max: 10 * 86_400_000 }),
        fc.integer({ min: 0, max: 3 * 86_400_000 }),
        fc.integer({ min: 1, max: 5 }),
        (cron, offset, downtime, catchUp) => {
          const nextRunAt = new Date(base + offset);
          const now = new Date(base + offset + downtime);
          const plan = planFires(record(cron, nextRunAt.toISOString(), catchUp), now);
          expect(plan.fires.length).to.be.at.most(catchUp);
          for (const fire of plan.fires) {
            expect(fire.getTime()).to.be.at.least(nextRunAt.getTime());
            expect(fire.getTime()).to.be.at.most(now.getTime());
          }
          expect(plan.nextRunAt.getTime()).to.be.greaterThan(now.getTime());
          expect([...plan.fires].sort((a, b) => a.getTime() - b.getTime())).to.deep.equal(plan.fires);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("parseCron and defineSchedule", () => {
  it("refuse an invalid expression or time zone, naming the option", () => {
    expect(() => parseCron("61 * * * *", "UTC")).to.throw(ConfigError, "`cron`");
    expect(() => defineSchedule({ name: "x", job: Report, cron: "* * * * *", timeZone: "Mars/Base", payload: { kind: "a" } })).to.throw(
      ConfigError,
      "`timeZone`",
    );
    expect(() => defineSchedule({ name: "Bad Name", job: Report, cron: "* * * * *", payload: { kind: "a" } })).to.throw(InvalidNameError, "schedule name");
    expect(() => defineSchedule({ name: "x", job: Report, cron: "* * * * *", payload: { kind: "a" }, catchUp: 0 })).to.throw(ConfigError, "`catchUp`");
  });

  it("carry the queue, the serialised payload and the kind's job settings", () => {
    const schedule = defineSchedule({ name: "weekly", job: Report, cron: "0 6 * * 1", timeZone: "Europe/Berlin", payload: { kind: "revenue" } });
    expect(schedule.spec).to.deep.equal({
      name: "weekly",
      queue: "weekly-report",
      cron: "0 6 * * 1",
      timeZone: "Europe/Berlin",
      payloadJson: '{"kind":"revenue"}',
      catchUp: 1,
      enabled: true,
      priority: 0,
      maxAttempts: 3,
      timeoutMs: null,
    });
  });
});
