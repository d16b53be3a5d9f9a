import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { sql } from "kysely";
import { createDatabase, dropSchema, migrate, PostgresJobStore, type DatabaseHandle } from "../../src";
import { migrateTo } from "./migrate-to";

const connectionString = process.env["DATABASE_URL"] ?? "";

describe("migration 13 (schedule-declarations)", () => {
  let database: DatabaseHandle;
  const schema = `stint_declared_${randomBytes(5).toString("hex")}`;

  before(() => {
    database = createDatabase({ connectionString });
  });
  after(async () => {
    await dropSchema(database.db, schema);
    await database.close();
  });

  it("turns the stored schedules into code schedules declared when it ran, so they fire through one grace more", async () => {
    const { db } = database;
    await migrateTo(db, schema, 12);
    await sql`INSERT INTO ${sql.id(schema, "schedules")} (name, queue, cron, time_zone, payload, next_run_at)
      VALUES ('nightly', 'report', '0 2 * * *', 'UTC', '{}', now() - interval '1 minute')`.execute(db);

    const result = await migrate(db, { schema });
    expect(result.applied[0]).to.equal(13);
    const { rows } = await sql<{ migrated_at: Date }>`SELECT now() AS migrated_at`.execute(db);
    const store = new PostgresJobStore({ db, schema });
    const [nightly] = await store.listSchedules();
    expect(nightly).to.include({ name: "nightly", origin: "code" });
    expect(nightly!.declaredAt.getTime()).to.be.at.most(rows[0]!.migrated_at.getTime());
    expect(rows[0]!.migrated_at.getTime() - nightly!.declaredAt.getTime()).to.be.below(60_000);
    const fires = await store.fireDueSchedules({
      limit: 10,
      graceMs: 60_000,
      plan: (record, now) => ({ fires: [record.nextRunAt], nextRunAt: new Date(now.getTime() + 3_600_000) }),
    });
    expect(fires.map((fire) => fire.schedule)).to.deep.equal(["nightly"]);
  });
});
