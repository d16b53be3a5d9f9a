import { join } from "node:path";
import { expect } from "chai";
import type { ScheduleSpec } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { sql } from "kysely";
import { ExitCode } from "../../src/index";
import { databaseUrl, stint, type ErrorJson } from "../helpers/run-stint";

const APP = join(__dirname, "..", "fixtures", "test-app.js");
const DAY = 86_400_000;

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

/** The line of the table that starts with `name`. */
function rowOf(stdout: string, name: string): string {
  const row = stdout.split("\n").find((line) => line.startsWith(`${name} `));
  if (row === undefined) throw new Error(`no row for ${name} in:\n${stdout}`);
  return row;
}

describe("stint schedules", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_cli", maxConnections: 4 });
  });
  afterEach(() => test.drop());

  const schedules = (args: readonly string[], env: Record<string, string> = {}) =>
    stint(["schedules", ...args, "--schema", test.schema], { env: { DATABASE_URL: databaseUrl(), ...env } });

  /** Moves the last declaration of `name` back by `ms`, as if its processes had stopped declaring it that long ago. */
  async function ageDeclaration(name: string, ms: number): Promise<void> {
    await sql`UPDATE ${sql.id(test.schema, "schedules")} SET declared_at = declared_at - ${ms}::double precision * interval '1 millisecond'
      WHERE name = ${name}`.execute(test.db);
  }

  describe("list", () => {
    it("says when there are none", async () => {
      const result = await schedules(["list"]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.equal(`No schedules in schema "${test.schema}".\n`);
    });

    describe("with schedules", () => {
      beforeEach(async () => {
        await test.store.syncSchedules({
          schedules: [
            spec("weekly-sales"),
            spec("nightly-cleanup", { queue: "cleanup", cron: "30 2 * * *", timeZone: "UTC", enabled: false }),
            spec("removed-from-code", { queue: "cleanup", cron: "0 4 * * *", timeZone: "UTC" }),
          ],
          firstRunAt: () => new Date("2031-01-06T08:00:00Z"),
        });
        await test.store.upsertSchedule({ schedule: spec("digest.tenant-42", { queue: "digest" }), firstRunAt: () => new Date("2031-01-06T08:00:00Z") });
        await ageDeclaration("removed-from-code", 2 * DAY);
      });

      it("prints each schedule's origin, last declaration, status, enabled and next run, and counts the expired ones", async () => {
        const result = await schedules(["list"]);
        expect(result.code).to.equal(ExitCode.Ok);
        const lines = result.stdout.trimEnd().split("\n");
        expect(lines[0]).to.match(/^name\s+queue\s+cron\s+time zone\s+origin\s+declared\s+status\s+enabled\s+next run\s+last fired$/);
        const at = String.raw`\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ`;
        expect(rowOf(result.stdout, "weekly-sales")).to.match(
          new RegExp(String.raw`^weekly-sales\s+weekly-report\s+0 9 \* \* 1\s+Europe/Berlin\s+code\s+${at}\s+live\s+yes\s+2031-01-06 08:00:00Z\s+-$`),
        );
        expect(rowOf(result.stdout, "nightly-cleanup")).to.match(/\s+code\s+\S+ \S+\s+live\s+no\s+-\s+-$/);
        expect(rowOf(result.stdout, "removed-from-code")).to.match(/\s+code\s+\S+ \S+\s+expired\s+yes\s+-\s+-$/);
        expect(rowOf(result.stdout, "digest.tenant-42")).to.match(/\s+runtime\s+\S+ \S+\s+live\s+yes\s+2031-01-06 08:00:00Z\s+-$/);
        expect(result.stdout).to.contain(
          "1 schedule is expired: no process has declared it for 1d, so it no longer fires (`stint schedules remove NAME` deletes one).",
        );
      });

      it("judges expiry by --schedule-grace, else STINT_SCHEDULE_GRACE", async () => {
        expect(rowOf((await schedules(["list", "--schedule-grace", "3d"])).stdout, "removed-from-code")).to.match(/\s+live\s+yes\s+2031/);
        expect(rowOf((await schedules(["list"], { STINT_SCHEDULE_GRACE: "3d" })).stdout, "removed-from-code")).to.match(/\s+live\s+/);
        const bad = await schedules(["list", "--json"], { STINT_SCHEDULE_GRACE: "forever" });
        expect(bad.code).to.equal(ExitCode.Config);
        expect((JSON.parse(bad.stderr) as ErrorJson).error.message).to.equal(
          'STINT_SCHEDULE_GRACE must be a duration from 1m to 365d, such as 12h, 1d or 7d; got "forever"',
        );
      });

      it("prints them as JSON, with the grace, each status and when a declared one expires", async () => {
        const { graceMs, schedules: listed } = (await schedules(["list", "--json"])).json() as {
          graceMs: number;
          schedules: { name: string; declaredAt: string; expiresAt: string | null; payload: unknown }[];
        };
        expect(graceMs).to.equal(DAY);
        const weekly = listed.find((schedule) => schedule.name === "weekly-sales")!;
        expect(weekly).to.deep.include({
          queue: "weekly-report",
          cron: "0 9 * * 1",
          timeZone: "Europe/Berlin",
          origin: "code",
          status: "live",
          nextRunAt: "2031-01-06T08:00:00.000Z",
          lastFiredAt: null,
          enabled: true,
          maxAttempts: 5,
        });
        expect(Date.parse(weekly.expiresAt!) - Date.parse(weekly.declaredAt)).to.equal(DAY);
        expect(weekly.payload).to.deep.equal({ team: "weekly-sales" });
        expect(listed.find((schedule) => schedule.name === "removed-from-code")).to.deep.include({ status: "expired" });
        expect(listed.find((schedule) => schedule.name === "digest.tenant-42")).to.deep.include({ origin: "runtime", status: "live", expiresAt: null });
      });
    });
  });

  describe("remove", () => {
    beforeEach(async () => {
      await test.store.syncSchedules({ schedules: [spec("still-declared"), spec("removed-from-code")], firstRunAt: () => new Date("2031-01-06T08:00:00Z") });
      await ageDeclaration("removed-from-code", 2 * DAY);
    });

    it("deletes an expired schedule at once", async () => {
      const result = await schedules(["remove", "removed-from-code"]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.stdout).to.equal('Removed schedule "removed-from-code" (declared in code, queue weekly-report).\n');
      expect(result.stderr).to.equal("");
      expect((await test.store.listSchedules()).map((schedule) => schedule.name)).to.deep.equal(["still-declared"]);
    });

    it("warns that a schedule the code still declares comes back, and says so in JSON", async () => {
      const result = await schedules(["remove", "still-declared", "--json"]);
      expect(result.code).to.equal(ExitCode.Ok);
      expect(result.json()).to.deep.equal({ name: "still-declared", removed: true, origin: "code", stillDeclared: true });
      expect(result.stderr).to.match(/^stint: warning: schedule "still-declared" was declared in code at .*take it out of the code to stop it for good\n$/);
    });

    it("exits 3 for a schedule that does not exist, and 78 for a name no schedule can have", async () => {
      const missing = await schedules(["remove", "no-such-schedule", "--json"]);
      expect(missing.code).to.equal(ExitCode.NotFound);
      expect((JSON.parse(missing.stderr) as ErrorJson).error).to.deep.equal({
        code: "STINT_NOT_FOUND",
        message: `schedule "no-such-schedule" not found in schema "${test.schema}" (see \`stint schedules list\`)`,
      });
      expect((await schedules(["remove", "Not A Name"])).code).to.equal(ExitCode.Config);
      expect((await schedules(["remove"])).code).to.equal(ExitCode.Usage);
    });
  });

  describe("add", () => {
    it("creates a runtime schedule, and changes it when given again", async () => {
      const args = ["add", "digest.tenant-42", "--queue", "digest", "--cron", "0 8 * * *", "--tz", "Europe/Berlin", "--payload", '{"tenantId": 42}', "--force"];
      const created = await schedules(args);
      expect(created.code, created.stderr).to.equal(ExitCode.Ok);
      expect(created.stdout).to.match(
        /^Added schedule "digest\.tenant-42" on digest: 0 8 \* \* \* \(Europe\/Berlin\), next run \d{4}-\d\d-\d\d 0[67]:00:00Z\.\n$/,
      );
      const [stored] = await test.store.listSchedules();
      expect(stored).to.include({ name: "digest.tenant-42", origin: "runtime", queue: "digest", timeZone: "Europe/Berlin", catchUp: 1, maxAttempts: 25 });
      expect(JSON.parse(stored!.payloadJson)).to.deep.equal({ tenantId: 42 });

      const changed = await schedules([...args.slice(0, -3), "--payload", '{"tenantId": 43}', "--catch-up", "3", "--json"]);
      expect(changed.code, changed.stderr).to.equal(ExitCode.Ok);
      expect(changed.json()).to.deep.include({ name: "digest.tenant-42", created: false, queue: "digest", nextRunAt: stored!.nextRunAt.toISOString() });
      const [again] = await test.store.listSchedules();
      expect(again).to.include({ catchUp: 3 });
      expect(JSON.parse(again!.payloadJson)).to.deep.equal({ tenantId: 43 });
    });

    it("takes the job settings from the app's job kind with --app, and refuses a queue the app has no worker for", async () => {
      const result = await schedules(["add", "echo-hourly", "--queue", "cli-echo", "--cron", "0 * * * *", "--payload", '{"text": "tick"}', "--app", APP]);
      expect(result.code, result.stderr).to.equal(ExitCode.Ok);
      expect((await test.store.listSchedules())[0]).to.include({ queue: "cli-echo", maxAttempts: 3, origin: "runtime" });
      const unknown = await schedules(["add", "echo-hourly", "--queue", "cli-ecko", "--cron", "0 * * * *", "--app", APP]);
      expect(unknown.code).to.equal(ExitCode.Config);
      expect(unknown.stderr).to.contain('has no worker for queue "cli-ecko"');
    });

    it("refuses the name of a schedule the code declares with exit 4, writing nothing", async () => {
      await test.store.syncSchedules({ schedules: [spec("weekly-sales")], firstRunAt: () => new Date("2031-01-06T08:00:00Z") });
      const result = await schedules(["add", "weekly-sales", "--queue", "weekly-report", "--cron", "0 10 * * 1", "--json"]);
      expect(result.code).to.equal(ExitCode.WrongState);
      const { error } = JSON.parse(result.stderr) as ErrorJson;
      expect(error.code).to.equal("STINT_WRONG_STATE");
      expect(error.message).to.contain('schedule "weekly-sales" is declared in the application\'s code; a runtime schedule cannot take its name');
      expect((await test.store.listSchedules())[0]).to.include({ origin: "code", cron: "0 9 * * 1" });
    });

    it("names the flag of a bad cron, time zone or catch-up, refuses a queue never seen without --force, and needs --queue and --cron", async () => {
      const add = (...args: string[]) => schedules(["add", "s", ...args]);
      const cron = await add("--queue", "q", "--cron", "61 * * * *", "--force");
      expect(cron.code).to.equal(ExitCode.Config);
      expect(cron.stderr).to.match(/^stint: --cron "61 \* \* \* \*" in UTC: /);
      const zone = await add("--queue", "q", "--cron", "0 * * * *", "--tz", "Mars/Olympus", "--force");
      expect(zone.code).to.equal(ExitCode.Config);
      expect(zone.stderr).to.match(/^stint: --tz /);
      const catchUp = await add("--queue", "q", "--cron", "0 * * * *", "--catch-up", "5000", "--force");
      expect(catchUp.stderr).to.equal("stint: --catch-up must be an integer from 1 to 1000, got 5000\n");
      const payload = await add("--queue", "q", "--cron", "0 * * * *", "--payload", "{nope", "--force");
      expect(payload.code).to.equal(ExitCode.Usage);
      const unseen = await add("--queue", "never-seen", "--cron", "0 * * * *");
      expect(unseen.code).to.equal(ExitCode.Config);
      expect(unseen.stderr).to.contain('queue "never-seen" has no jobs and no schedule').and.contain("pass --force to schedule on a new queue");
      expect((await add("--cron", "0 * * * *")).code).to.equal(ExitCode.Usage);
      expect((await add("--queue", "q")).code).to.equal(ExitCode.Usage);
      expect(await test.store.listSchedules()).to.deep.equal([]);
    });
  });
});
