import { expect } from "chai";
import type { ScheduleSpec } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { ExitCode } from "../../src/index";
import { stint } from "../helpers/run-stint";

describe("stint schedules list", () => {
  let test: TestSchema;

  const spec = (name: string, overrides: Partial<ScheduleSpec> = {}): ScheduleSpec => ({
    name,
    queue: "weekly-report",
    cron: "0 9 * * 1",
    timeZone: "Europe/Berlin",
    payloadJson: JSON.stringify({ team: name }),
    catchUp: 1,
    enabled: true,
    priority: 0,
    maxAttempts: 5,
    timeoutMs: null,
    ...overrides,
  });

  before(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
  });
  after(() => test.drop());

  it("says when there are none", async () => {
    const result = await stint(["schedules", "list", "--schema", test.schema]);
    expect(result.code).to.equal(ExitCode.Ok);
    expect(result.stdout).to.equal(`No schedules in schema "${test.schema}".\n`);
  });

  describe("with schedules", () => {
    before(async () => {
      await test.store.syncSchedules({
        schedules: [spec("weekly-sales"), spec("nightly-cleanup", { queue: "cleanup", cron: "30 2 * * *", timeZone: "UTC", enabled: false })],
        firstRunAt: () => new Date("2031-01-06T08:00:00Z"),
      });
    });

    it("prints name, queue, cron, time zone, next run, last fired and enabled", async () => {
      const result = await stint(["schedules", "list", "--schema", test.schema]);
      expect(result.code).to.equal(ExitCode.Ok);
      const lines = result.stdout.trimEnd().split("\n");
      expect(lines[0]).to.match(/^name\s+queue\s+cron\s+time zone\s+next run\s+last fired\s+enabled$/);
      expect(lines.slice(2)).to.have.length(2);
      expect(lines).to.satisfy((all: string[]) =>
        all.some((line) => /^weekly-sales\s+weekly-report\s+0 9 \* \* 1\s+Europe\/Berlin\s+2031-01-06 08:00:00Z\s+-\s+yes$/.test(line)),
      );
      expect(lines).to.satisfy((all: string[]) => all.some((line) => /^nightly-cleanup\s+cleanup\s+30 2 \* \* \*\s+UTC\s+.*\s+no$/.test(line)));
    });

    it("prints them as JSON", async () => {
      const { schedules } = (await stint(["schedules", "list", "--schema", test.schema, "--json"])).json() as {
        schedules: { name: string; payload: unknown }[];
      };
      const weekly = schedules.find((schedule) => schedule.name === "weekly-sales");
      expect(weekly).to.deep.include({
        queue: "weekly-report",
        cron: "0 9 * * 1",
        timeZone: "Europe/Berlin",
        nextRunAt: "2031-01-06T08:00:00.000Z",
        lastFiredAt: null,
        enabled: true,
        maxAttempts: 5,
      });
      expect(weekly!.payload).to.deep.equal({ team: "weekly-sales" });
    });
  });
});
