import { randomBytes } from "node:crypto";
import { defineJob, defineSchedule, ErrorCode, errorCodeOf, JobClient, ScheduleClient } from "@stint/core";
import { LeaseRescuer, RetentionPruner, ScheduleTicker } from "@stint/core/driver";
import { expect } from "chai";
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { container as rootContainer } from "tsyringe";
import {
  createDatabase,
  DEFAULT_ROLES,
  diagnose,
  migrate,
  PostgresJobStore,
  registerPostgresDriver,
  rolesSql,
  type DatabaseHandle,
  type PostgresDriverHandle,
} from "../../src";
import { eventually, newJob } from "@stint/core/testing";
import { ScriptedWorker, TaskJob } from "../worker-lifecycle/scripted-worker";

const Reminder = defineJob<{ n: number }>("reminder");

/** `DATABASE_URL` with another user and password. */
function urlFor(role: string, password: string): string {
  const url = new URL(process.env["DATABASE_URL"] ?? "");
  url.username = role;
  url.password = password;
  return url.toString();
}

/** The SQLSTATE a statement failed with (from pg, or carried by a stint error). */
async function sqlStateOf(run: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await run();
  } catch (thrown) {
    const error = thrown as { code?: string; sqlState?: string; cause?: { code?: string } };
    return error.sqlState ?? (/^[0-9A-Z]{5}$/.test(error.code ?? "") ? error.code : error.cause?.code);
  }
  return undefined;
}

describe("least privilege: a migration role and a runtime role", function () {
  this.timeout(60_000);
  const suffix = randomBytes(6).toString("hex");
  const schema = `stint_roles_${suffix}`;
  const adopted = `stint_adopt_${suffix}`;
  const migrator = `stint_m_${suffix}`;
  const runtime = `stint_r_${suffix}`;
  const password = randomBytes(12).toString("hex");
  let admin: pg.Client;
  let driver: PostgresDriverHandle | undefined;
  let asRuntime: DatabaseHandle | undefined;
  let asMigrator: DatabaseHandle | undefined;

  before(async () => {
    admin = new pg.Client({ connectionString: process.env["DATABASE_URL"] });
    await admin.connect();
    const { rows } = await admin.query<{ allowed: boolean }>("SELECT rolsuper OR rolcreaterole AS allowed FROM pg_roles WHERE rolname = current_user");
    if (rows[0]?.allowed !== true) throw new Error("this test creates two roles: DATABASE_URL must name a superuser or a CREATEROLE role");
    await admin.query(rolesSql(schema, { migrator, runtime }));
    await admin.query(`ALTER ROLE "${migrator}" PASSWORD '${password}'`);
    await admin.query(`ALTER ROLE "${runtime}" PASSWORD '${password}'`);
  });

  after(async () => {
    await driver?.close();
    await asRuntime?.close();
    await asMigrator?.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS "${adopted}" CASCADE`);
    await admin.query(`DROP OWNED BY "${migrator}", "${runtime}"`);
    await admin.query(`DROP ROLE IF EXISTS "${migrator}"`);
    await admin.query(`DROP ROLE IF EXISTS "${runtime}"`);
    await admin.end();
  });

  it("prints SQL that quotes the names it validated and refuses others", () => {
    const text = rolesSql("billing", { migrator: "billing_migrator", runtime: "billing_worker" });
    expect(text).to.include('CREATE SCHEMA IF NOT EXISTS "billing" AUTHORIZATION "billing_migrator";');
    expect(text).to.include('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "billing" TO "billing_worker";');
    expect(text).not.to.match(/GRANT (CREATE|ALL)[^;]*TO "billing_worker"/);
    expect(rolesSql()).to.include(`"${DEFAULT_ROLES.migrator}"`).and.to.include(`"${DEFAULT_ROLES.runtime}"`);
    for (const bad of ['x"; DROP ROLE postgres; --', "Runtime", "pg_monitor", "public", ""]) {
      expect(() => rolesSql("stint", { migrator: "m", runtime: bad }), bad).to.throw("runtime role");
    }
    expect(() => rolesSql("stint", { migrator: "same", runtime: "same" })).to.throw("two different roles");
  });

  it("is idempotent: running the roles SQL again changes nothing", async () => {
    await admin.query(rolesSql(schema, { migrator, runtime }));
  });

  it("lets the migrator migrate the schema it owns, and nothing outside it", async () => {
    const result = await migrate({ connectionString: urlFor(migrator, password) }, { schema });
    expect(result.applied.length).to.be.greaterThan(0);
    const again = await migrate({ connectionString: urlFor(migrator, password) }, { schema });
    expect(again.applied).to.deep.equal([]);
    asMigrator = createDatabase({ connectionString: urlFor(migrator, password), maxConnections: 1 });
    expect(await sqlStateOf(() => sql`CREATE SCHEMA ${sql.id(`${schema}_other`)}`.execute(asMigrator!.db))).to.equal("42501");
    const { rows } = await admin.query<{ owner: string }>(
      "SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relnamespace = $1::regnamespace",
      [schema],
    );
    expect(rows.map((row) => row.owner)).to.deep.equal([migrator]);
  });

  it("runs producers, a worker, schedules, wake-ups, the leader lock and maintenance as the runtime role", async () => {
    driver = registerPostgresDriver(rootContainer.createChildContainer(), { connectionString: urlFor(runtime, password), schema, maxConnections: 4 });
    const { store, wakeupSource, leaderLock } = driver;
    const woken: string[] = [];
    const subscription = await wakeupSource!.subscribe([TaskJob.name], { onWake: (queue) => woken.push(queue) });
    try {
      const client = new JobClient(store);
      await client.enqueue(TaskJob, { n: 1 }, { dedupeKey: "task:1" });
      await client.enqueueMany(TaskJob, [{ payload: { n: 2 } }, { payload: { n: 3 } }]);
      await driver.db.transaction().execute((trx) => client.enqueue(TaskJob, { n: 4 }, { transaction: trx }));
      await eventually(() => woken.includes(TaskJob.name), { timeoutMs: 10_000, what: "a wake-up for the queue" });

      expect(await leaderLock!.tryAcquire()).to.equal(true);
      await leaderLock!.release();

      const schedule = defineSchedule({ name: "nightly", job: Reminder, cron: "* * * * *", payload: { n: 9 } });
      await store.syncSchedules({ schedules: [schedule.spec], firstRunAt: (_spec, now) => new Date(now.getTime() - 60_000) });
      await new ScheduleTicker(store).runOnce();
      expect((await store.countByQueue({ queues: [Reminder.name] }))[0]?.counts.queued).to.equal(1);
      await new ScheduleClient(store).upsert({ name: "weekly", job: Reminder, cron: "0 9 * * 1", payload: { n: 10 } });
      expect(await new ScheduleClient(store).remove("weekly")).to.equal(true);

      const effects: string[] = [];
      const summary = await new ScriptedWorker(store, {
        process: async (item, ctx) => {
          await ctx.once(`task:${item.n}:effect`, async () => effects.push(`task ${item.n}`));
          if (item.n === 3) await ctx.enqueue(Reminder, { n: 30 });
          return { n: item.n };
        },
      }).start();
      expect(summary).to.include({ claimed: 4, succeeded: 4, dead: 0, leaseLost: 0 });
      expect(effects.sort()).to.deep.equal(["task 1", "task 2", "task 3", "task 4"]);

      const [job] = await store.listJobs({ queue: Reminder.name, limit: 1 });
      expect(await store.cancelJob({ id: job!.id })).to.equal(true);
      expect(await store.retryJob({ id: job!.id })).to.equal(true);
      await new LeaseRescuer(store).runOnce();
      await new RetentionPruner(store, { succeededDays: 0, deadDays: 0, effectsDays: 0 }).runOnce();
      expect((await store.listJobs({ queue: TaskJob.name, limit: 10 })).length).to.equal(0);
      const diagnosis = await diagnose(driver.db, schema);
      const failed = diagnosis.checks.filter((check) => !check.ok).map((check) => `${check.name}: ${check.detail}`);
      expect(failed, "stint doctor as the runtime role").to.deep.equal([]);
    } finally {
      await subscription.close();
    }
  });

  it("keeps the history's day partitions and drops a past day's as the runtime role, which still owns nothing", async () => {
    const runtimeDb = createDatabase({ connectionString: urlFor(runtime, password), maxConnections: 2 });
    try {
      const db = runtimeDb.db;
      const store = new PostgresJobStore({ db, schema });
      const dayName = async (daysAgo: number): Promise<string> =>
        (
          await sql<{ name: string }>`SELECT 'finished_jobs_' || to_char((now() AT TIME ZONE 'UTC')::date - ${daysAgo}::integer, 'YYYYMMDD') AS name`.execute(
            db,
          )
        ).rows[0]!.name;
      const exists = async (table: string): Promise<boolean> =>
        (await sql<{ found: boolean }>`SELECT to_regclass(${`"${schema}"."${table}"`}) IS NOT NULL AS found`.execute(db)).rows[0]!.found;
      const past = await dayName(3);
      expect(await exists(past), `${past} before it is made`).to.equal(false);
      const ensure = async (from: number, to: number): Promise<number | undefined> =>
        (
          await sql<{ created: number }>`SELECT ${sql.id(schema, "ensure_history_partitions")}(
            (now() AT TIME ZONE 'UTC')::date + ${from}::integer, (now() AT TIME ZONE 'UTC')::date + ${to}::integer) AS created`.execute(db)
        ).rows[0]?.created;
      expect(await ensure(0, 7), "the week ahead is there already").to.equal(0);
      expect(await ensure(-3, -3)).to.equal(1);
      expect(await exists(past)).to.equal(true);

      const queue = "history-privileges";
      const ids = (await store.enqueueMany(["succeeds", "dies"].map((how, n) => newJob(queue, { how }, { priority: 2 - n })))).map((job) => job.id);
      const [succeeds, dies] = await store.claimBatch({ queue, workerId: "w", limit: 2, leaseMs: 60_000 });
      await store.completeJobs({ workerId: "w", jobs: [{ ...succeeds!, resultJson: null, durationMs: 1 }] });
      await store.markJobsDead({ workerId: "w", jobs: [{ ...dies!, failure: { message: "no", code: null } }] });
      // Three days old: the rows move to that day's partition, as if they had finished then.
      await sql`UPDATE ${sql.id(schema, "finished_jobs")} SET finished_at = finished_at - interval '3 days' WHERE queue = ${queue}`.execute(db);
      const { rows: placed } = await sql<{ id: string; part: string }>`SELECT id::text, tableoid::regclass::text AS part
        FROM ${sql.id(schema, "finished_jobs")} WHERE queue = ${queue} ORDER BY id`.execute(db);
      expect(placed.map((row) => [row.id, row.part])).to.deep.equal(ids.map((id) => [id, `${schema}.${past}`]));

      await new RetentionPruner(store, { succeededDays: 1, deadDays: 30, effectsDays: 30 }).runOnce();
      expect(await exists(past), `${past} dropped: its day is past the succeeded jobs' retention`).to.equal(false);
      expect(await store.getJob({ id: ids[0]! }), "the succeeded job went with its partition").to.equal(undefined);
      expect(await store.getJob({ id: ids[1]! }), "the dead job is kept for its 30 days").to.include({ state: "dead" });

      const { rows: owners } = await admin.query<{ owner: string }>(
        `SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relnamespace = $1::regnamespace`,
        [schema],
      );
      expect(owners.map((row) => row.owner)).to.deep.equal([migrator]);
    } finally {
      await runtimeDb.close();
    }
  });

  it("hands a schema migrated earlier by another role to the migrator, and opens it to the runtime role", async () => {
    await migrate({ connectionString: process.env["DATABASE_URL"]! }, { schema: adopted });
    await admin.query(rolesSql(adopted, { migrator, runtime }));
    const { rows } = await admin.query<{ owner: string }>(
      `SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relnamespace = $1::regnamespace
       UNION SELECT DISTINCT pg_get_userbyid(proowner) FROM pg_proc WHERE pronamespace = $1::regnamespace`,
      [adopted],
    );
    expect(rows.map((row) => row.owner)).to.deep.equal([migrator]);
    expect((await migrate({ connectionString: urlFor(migrator, password) }, { schema: adopted })).applied).to.deep.equal([]);
    const runtimeDb = createDatabase({ connectionString: urlFor(runtime, password), maxConnections: 1 });
    try {
      const store = new PostgresJobStore({ db: runtimeDb.db, schema: adopted });
      const { id } = await new JobClient(store).enqueue(Reminder, { n: 1 });
      expect(await store.cancelJob({ id })).to.equal(true);
      expect(await sqlStateOf(() => sql`DROP TABLE ${sql.id(adopted, "jobs")}`.execute(runtimeDb.db))).to.equal("42501");
    } finally {
      await runtimeDb.close();
    }
  });

  it("refuses DDL to the runtime role with SQLSTATE 42501", async () => {
    asRuntime = createDatabase({ connectionString: urlFor(runtime, password), maxConnections: 1 });
    const db: Kysely<any> = asRuntime.db;
    const jobs = sql.id(schema, "jobs");
    const attempts: Record<string, () => Promise<unknown>> = {
      "CREATE TABLE": () => sql`CREATE TABLE ${sql.id(schema, "stolen")} (x int)`.execute(db),
      "DROP TABLE jobs": () => sql`DROP TABLE ${jobs}`.execute(db),
      "ALTER TABLE jobs": () => sql`ALTER TABLE ${jobs} ADD COLUMN stolen text`.execute(db),
      "CREATE INDEX": () => sql`CREATE INDEX stolen_idx ON ${jobs} (queue)`.execute(db),
      "TRUNCATE jobs": () => sql`TRUNCATE ${jobs}`.execute(db),
      "CREATE FUNCTION": () => sql`CREATE FUNCTION ${sql.id(schema, "stolen")}() RETURNS int LANGUAGE sql AS 'SELECT 1'`.execute(db),
      "DROP SCHEMA": () => sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(db),
    };
    for (const [what, attempt] of Object.entries(attempts)) {
      expect(await sqlStateOf(attempt), what).to.equal("42501");
    }
    let refused: unknown;
    try {
      await migrate(db, { schema });
    } catch (thrown) {
      refused = thrown;
    }
    expect(errorCodeOf(refused), "migrate as the runtime role").to.equal(ErrorCode.Database);
    expect((refused as { sqlState?: string }).sqlState).to.equal("42501");
  });
});
