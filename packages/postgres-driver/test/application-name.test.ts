import { randomBytes } from "node:crypto";
import { applicationName, processIdentity } from "@stint/core/internal";
import { expect } from "chai";
import { sql, type Kysely } from "kysely";
import { container as rootContainer } from "tsyringe";
import { createDatabase, dropSchema, migrate, MIGRATIONS, registerPostgresDriver } from "../src";
import { lockMigrations } from "../src/schema/migrations/migration-bookkeeping";
import { createTestSchema, type TestSchema } from "../src/testing";
import { eventually } from "@stint/core/testing";

describe("application_name of stint's connections", () => {
  let test: TestSchema;

  before(async () => {
    test = await createTestSchema();
  });
  after(async () => {
    await test.drop();
  });

  /** The names of the sessions whose last statement mentions `schema`, or that hold the advisory lock `key`. */
  async function namesOfSessions(schema: string, key: string): Promise<string[]> {
    const { rows } = await sql<{ name: string }>`SELECT DISTINCT a.application_name AS name
        FROM pg_stat_activity AS a
       WHERE a.pid <> pg_backend_pid()
         AND (strpos(a.query, ${schema}) > 0
              OR a.pid IN (SELECT l.pid FROM pg_locks AS l
                            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                              AND l.classid::bigint = ((${key}::bigint >> 32) & 4294967295)
                              AND l.objid::bigint = (${key}::bigint & 4294967295)))
       ORDER BY 1`.execute(test.db);
    return rows.map((row) => row.name);
  }

  /** Sessions of this process waiting for an advisory lock under the migration's name. */
  async function waitingMigrations(): Promise<number> {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE application_name = ${applicationName("migrate")} AND wait_event_type = 'Lock' AND wait_event = 'advisory'`.execute(test.db);
    return rows[0]?.n ?? 0;
  }

  it("builds names as stint:<role>:<process identity>", () => {
    expect(processIdentity()).to.match(/^.+:\d+:[0-9a-f]{8}$/);
    for (const role of ["worker", "control", "listen", "leader", "migrate"]) {
      const name = applicationName(role);
      expect(Buffer.byteLength(name)).to.be.at.most(63);
      expect(`stint:${role}:${processIdentity()}`.startsWith(name)).to.equal(true);
    }
  });

  it("names every connection of a registered driver after its role and the process", async () => {
    const driver = registerPostgresDriver(rootContainer.createChildContainer(), {
      connectionString: test.connectionString,
      schema: test.schema,
      controlConnections: 1,
    });
    try {
      await driver.store.enqueue({ queue: "names", payloadJson: "{}", priority: 0, maxAttempts: 1, timeoutMs: null, runAt: null, delayMs: 0, dedupeKey: null });
      const [job] = await driver.store.claimBatch({ queue: "names", workerId: "w", limit: 1, leaseMs: 60_000 });
      await driver.store.extendLeases({ workerId: "w", leaseMs: 60_000, jobs: [job!] });
      await driver.wakeupSource!.subscribe(["names"], { onWake: () => undefined });
      expect(await driver.leaderLock!.tryAcquire()).to.equal(true);

      const names = await namesOfSessions(test.schema, driver.leaderLock!.key);
      expect(names).to.deep.equal(["control", "leader", "listen", "worker"].map(applicationName).sort());
      for (const name of names) expect(name).to.match(/^stint:(worker|control|listen|leader):/);
    } finally {
      await driver.close();
    }
  });

  it("names the migration's connection stint:migrate:<process identity>, and gives a borrowed one its name back", async () => {
    const schema = `stint_names_${randomBytes(5).toString("hex")}`;
    const borrowed = createDatabase({ connectionString: test.connectionString, maxConnections: 1, applicationName: "app-pool" });
    try {
      // The lock is the one each migration step takes: held here, it keeps both migrations waiting until this transaction ends.
      const migrations = await test.db.transaction().execute(async (holder: Kysely<any>) => {
        await lockMigrations(schema).execute(holder);
        const running = [migrate({ connectionString: test.connectionString }, { schema }), migrate(borrowed.db, { schema })];
        await eventually(async () => (await waitingMigrations()) === 2, {
          timeoutMs: 10_000,
          what: "both migrations to wait under the name stint:migrate:…",
        });
        return running;
      });
      const results = await Promise.all(migrations);
      expect(results.flatMap((result) => result.applied).sort((a, b) => a - b)).to.deep.equal(MIGRATIONS.map((migration) => migration.version));
      const { rows } = await sql<{ name: string }>`SELECT current_setting('application_name') AS name`.execute(borrowed.db);
      expect(rows[0]?.name).to.equal("app-pool");
    } finally {
      await dropSchema(test.db, schema).catch(() => undefined);
      await borrowed.close();
    }
  });
});
