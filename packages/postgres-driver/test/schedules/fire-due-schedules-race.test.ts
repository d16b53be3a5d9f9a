import type { ScheduleFire } from "@stint/core/driver";
import { expect } from "chai";
import { sql } from "kysely";
import { createDatabase, PostgresJobStore, type DatabaseHandle } from "../../src";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { DAY, dueAMinuteAgo, scheduleSpec, threeFiresThenAnHour } from "./schedule-fixtures";

describe("fireDueSchedules under concurrency", () => {
  let test: TestSchema;
  let pools: DatabaseHandle[];

  beforeEach(async () => {
    test = await createTestSchema();
    pools = Array.from({ length: 5 }, () => createDatabase({ connectionString: test.connectionString, maxConnections: 1 }));
  });
  afterEach(async () => {
    await Promise.all(pools.map((pool) => pool.close()));
    await test.drop();
  });

  it("enqueues each fire exactly once when five processes tick at the same moment", async () => {
    const names = ["alpha", "beta", "gamma", "delta"];
    await test.store.syncSchedules({ schedules: names.map((name) => scheduleSpec(name)), firstRunAt: dueAMinuteAgo });
    const stores = pools.map((pool) => new PostgresJobStore({ db: pool.db, schema: test.schema }));
    const jobs = sql.id(test.schema, "jobs");
    for (let round = 1; round <= 3; round += 1) {
      const perProcess = await Promise.all(stores.map((store) => store.fireDueSchedules({ limit: 10, graceMs: DAY, plan: threeFiresThenAnHour })));
      const fires: ScheduleFire[] = perProcess.flat();
      expect(
        fires.filter((fire) => fire.duplicate),
        `round ${round}`,
      ).to.deep.equal([]);
      expect(fires, `round ${round}`).to.have.length(names.length * 3);
      const distinct = new Set(fires.map((fire) => `${fire.schedule}@${fire.fireAt.toISOString()}`));
      expect(distinct.size, `round ${round}`).to.equal(names.length * 3);
      const { rows } = await sql<{ total: number; keys: number }>`SELECT count(*)::int AS total, count(DISTINCT dedupe_key)::int AS keys
        FROM ${jobs}`.execute(test.db);
      expect(rows[0], `round ${round}`).to.deep.equal({ total: names.length * 3 * round, keys: names.length * 3 * round });
      await sql`UPDATE ${sql.id(test.schema, "schedules")}
        SET next_run_at = now() - (${round}::integer * interval '10 minutes')`.execute(test.db);
    }
  });
});
