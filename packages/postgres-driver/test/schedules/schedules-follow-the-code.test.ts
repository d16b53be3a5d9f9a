import { defineJob, defineSchedule } from "@stint/core";
import { ScheduleDeclarer, ScheduleTicker } from "@stint/core/driver";
import { expect } from "chai";
import { sql } from "kysely";
import { createDatabase, PostgresJobStore, type DatabaseHandle } from "../../src";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { DAY } from "./schedule-fixtures";

const Ping = defineJob<{ from: string }>("ping");
const everySecond = (name: string) => defineSchedule({ name, job: Ping, cron: "* * * * * *", payload: { from: name } });

describe("schedules follow the code, on PostgreSQL", () => {
  let test: TestSchema;
  let pools: DatabaseHandle[];
  /** One store per process, each on its own pool. */
  let processes: PostgresJobStore[];

  beforeEach(async () => {
    test = await createTestSchema();
    pools = Array.from({ length: 3 }, () => createDatabase({ connectionString: test.connectionString, maxConnections: 1 }));
    processes = pools.map((pool) => new PostgresJobStore({ db: pool.db, schema: test.schema }));
  });
  afterEach(async () => {
    await Promise.all(pools.map((pool) => pool.close()));
    await test.drop();
  });

  /** Moves every schedule's last declaration back by `ms`, as if that long had passed without one. */
  async function passWithoutDeclarations(ms: number): Promise<void> {
    await sql`UPDATE ${sql.id(test.schema, "schedules")} SET declared_at = declared_at - ${ms}::double precision * interval '1 millisecond'`.execute(test.db);
  }

  /** The schedules the jobs table holds fires of. */
  async function firedSchedules(): Promise<string[]> {
    const { rows } = await sql<{ name: string }>`SELECT DISTINCT split_part(dedupe_key, ':', 2) AS name
      FROM ${sql.id(test.schema, "jobs")} WHERE dedupe_key LIKE 'schedule:%' ORDER BY name`.execute(test.db);
    return rows.map((row) => row.name);
  }

  /** Ticks as the leader (a process that declares nothing itself) would, until the every-second schedules came due once more. */
  async function tickPastASecond(ticker: ScheduleTicker): Promise<void> {
    await sql`DELETE FROM ${sql.id(test.schema, "jobs")}`.execute(test.db);
    await ticker.tick();
    await sql`SELECT pg_sleep(1.1)`.execute(test.db);
    await ticker.tick();
  }

  it("stops a schedule deleted from the code once the restarted processes have not declared it for the grace", async () => {
    const [before, after, leader] = processes as [PostgresJobStore, PostgresJobStore, PostgresJobStore];
    await new ScheduleDeclarer(before, [everySecond("kept"), everySecond("deleted")]).declare();
    const ticker = new ScheduleTicker(leader, { graceMs: DAY });
    await tickPastASecond(ticker);
    expect(await firedSchedules()).to.deep.equal(["deleted", "kept"]);

    // The deploy: the process comes back with code that declares only `kept`, and a day passes.
    await passWithoutDeclarations(DAY + 60_000);
    await new ScheduleDeclarer(after, [everySecond("kept")]).declare();
    await tickPastASecond(ticker);
    expect(await firedSchedules()).to.deep.equal(["kept"]);
    const deleted = (await leader.listSchedules()).find((schedule) => schedule.name === "deleted");
    expect(deleted, "still listed, for `stint schedules list` to show as expired").to.include({ origin: "code" });
  });

  it("keeps firing what either version declares while two versions run side by side, and a runtime schedule whatever is declared", async () => {
    const [oldVersion, newVersion, leader] = processes as [PostgresJobStore, PostgresJobStore, PostgresJobStore];
    await leader.upsertSchedule({ schedule: everySecond("made-at-run-time").spec, firstRunAt: (_spec, now) => now });
    const ticker = new ScheduleTicker(leader, { graceMs: DAY });
    for (let day = 0; day < 3; day += 1) {
      await passWithoutDeclarations(DAY / 2);
      await new ScheduleDeclarer(oldVersion, [everySecond("shared"), everySecond("old-only")]).declare();
      await new ScheduleDeclarer(newVersion, [everySecond("shared"), everySecond("new-only")]).declare();
      await passWithoutDeclarations(DAY / 2);
    }
    await tickPastASecond(ticker);
    expect(await firedSchedules()).to.deep.equal(["made-at-run-time", "new-only", "old-only", "shared"]);

    // The old version is gone; only the new one declares.
    await passWithoutDeclarations(DAY);
    await new ScheduleDeclarer(newVersion, [everySecond("shared"), everySecond("new-only")]).declare();
    await tickPastASecond(ticker);
    expect(await firedSchedules()).to.deep.equal(["made-at-run-time", "new-only", "shared"]);
  });
});
