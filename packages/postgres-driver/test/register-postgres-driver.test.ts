import { ConfigError, PayloadError, InvalidNameError, JOB_STORE, JobClient, defineJob } from "@stint/core";
import { applicationName } from "@stint/core/internal";
import { LEADER_LOCK, SCHEDULE_STORE, WAKEUP_SOURCE } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { expect } from "chai";
import { sql, type Kysely } from "kysely";
import pg from "pg";
import { container as rootContainer } from "tsyringe";
import { POSTGRES_DB, PostgresJobStore, PostgresLeaderLock, PostgresWakeupSource, registerPostgresDriver } from "../src";
import { createTestSchema, type TestSchema } from "../src/testing";

const Ping = defineJob<{ n: number }>("ping");

describe("registerPostgresDriver", () => {
  let test: TestSchema;

  before(async () => {
    test = await createTestSchema();
  });
  after(async () => {
    await test.drop();
  });

  /** Connections named `name` whose last statement mentions this suite's schema (other suites share the process's names). */
  async function connectionsNamed(name: string): Promise<number> {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE application_name = ${name} AND pid <> pg_backend_pid() AND strpos(query, ${test.schema}) > 0`.execute(test.db);
    return rows[0]?.n ?? 0;
  }

  /** Connections named `name` holding the advisory lock `key` (a signed 64-bit integer in decimal). */
  async function lockHoldersNamed(name: string, key: string): Promise<number> {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
        AND l.classid::bigint = ((${key}::bigint >> 32) & 4294967295) AND l.objid::bigint = (${key}::bigint & 4294967295)
        AND a.application_name = ${name}`.execute(test.db);
    return rows[0]?.n ?? 0;
  }

  it("registers the store and the Kysely instance, and enqueues through the container", async () => {
    const container = rootContainer.createChildContainer();
    const driver = registerPostgresDriver(container, { connectionString: test.connectionString, schema: test.schema });
    try {
      const store = container.resolve(JOB_STORE);
      expect(store).to.be.instanceOf(PostgresJobStore);
      expect(store).to.equal(driver.store);
      expect((store as PostgresJobStore).schema).to.equal(test.schema);
      const db = container.resolve<Kysely<any>>(POSTGRES_DB);
      expect(db).to.equal(driver.db);
      const { id } = await container.resolve(JobClient).enqueue(Ping, { n: 1 });
      const { rows } = await sql<{ queue: string }>`SELECT queue FROM ${sql.id(test.schema, "jobs")} WHERE id = ${id}::bigint`.execute(db);
      expect(rows).to.deep.equal([{ queue: "ping" }]);
    } finally {
      await driver.close();
    }
  });

  it("uses a separate control pool for heartbeats and finalizes, and closes both pools", async () => {
    const container = rootContainer.createChildContainer();
    const driver = registerPostgresDriver(container, {
      connectionString: test.connectionString,
      schema: test.schema,
      applicationName: "stint-main",
      controlConnections: 1,
    });
    await driver.store.enqueue({ queue: "ctl", payloadJson: "{}", priority: 0, maxAttempts: 1, timeoutMs: null, runAt: null, delayMs: 0, dedupeKey: null });
    const [job] = await driver.store.claimBatch({ queue: "ctl", workerId: "w", limit: 1, leaseMs: 60_000 });
    expect((await driver.store.extendLeases({ workerId: "w", leaseMs: 60_000, jobs: [job!] })).extended).to.deep.equal([job!.id]);
    const open = async () => (await connectionsNamed("stint-main")) + (await connectionsNamed(applicationName("control")));
    // The claim, and beside it the day's first check of the history's partitions, which the claim starts and does not wait for.
    expect(await connectionsNamed("stint-main"), "the main pool, named as asked").to.be.within(1, 2);
    expect(await connectionsNamed(applicationName("control")), "the control pool, named for its role").to.equal(1);
    await driver.close();
    await driver.close();
    await eventually(async () => (await open()) === 0, { timeoutMs: 5_000, intervalMs: 0, what: "every connection of the registration to close" });
  });

  it("registers the schedule store, the wake-ups and the leader lock, connecting only when they are used", async () => {
    const container = rootContainer.createChildContainer();
    const options = { connectionString: test.connectionString, schema: test.schema, applicationName: `${test.schema}:drv` };
    const driver = registerPostgresDriver(container, options);
    const key = driver.leaderLock!.key;
    const listening = () => connectionsNamed(applicationName("listen"));
    const leading = () => lockHoldersNamed(applicationName("leader"), key);
    try {
      expect(container.resolve(SCHEDULE_STORE)).to.equal(driver.store);
      const wakeups = container.resolve(WAKEUP_SOURCE);
      const leader = container.resolve(LEADER_LOCK);
      expect(wakeups).to.be.instanceOf(PostgresWakeupSource).and.equal(driver.wakeupSource);
      expect(leader).to.be.instanceOf(PostgresLeaderLock).and.equal(driver.leaderLock);
      expect((await listening()) + (await leading())).to.equal(0);
      await wakeups.subscribe(["ping"], { onWake: () => undefined });
      expect(await leader.tryAcquire()).to.equal(true);
      expect(await listening()).to.equal(1);
      expect(await leading()).to.equal(1);
    } finally {
      await driver.close();
    }
    expect(driver.leaderLock?.held).to.equal(false);
    await eventually(async () => (await listening()) + (await leading()) === 0, { timeoutMs: 5_000, intervalMs: 0, what: "the session connections to close" });
  });

  it("registers wake-ups and the leader lock with a pool only when given a sessionConnectionString", async () => {
    const pool = new pg.Pool({ connectionString: test.connectionString, max: 1 });
    try {
      const without = rootContainer.createChildContainer();
      const plain = registerPostgresDriver(without, { pool, schema: test.schema });
      expect(without.isRegistered(SCHEDULE_STORE)).to.equal(true);
      expect(without.isRegistered(WAKEUP_SOURCE)).to.equal(false);
      expect(without.isRegistered(LEADER_LOCK)).to.equal(false);
      expect(plain.wakeupSource).to.equal(undefined);
      await plain.close();
      const withSession = rootContainer.createChildContainer();
      const session = registerPostgresDriver(withSession, { pool, schema: test.schema, sessionConnectionString: test.connectionString });
      expect(withSession.resolve(LEADER_LOCK)).to.equal(session.leaderLock);
      expect(await session.leaderLock!.tryAcquire()).to.equal(true);
      await session.close();
    } finally {
      await pool.end();
    }
  });

  it("gives the store the payload ceiling it was told", async () => {
    const container = rootContainer.createChildContainer();
    const driver = registerPostgresDriver(container, { connectionString: test.connectionString, schema: test.schema, maxPayloadBytes: 64 });
    try {
      const client = new JobClient(container.resolve(JOB_STORE));
      const refused = await client.enqueue(defineJob<{ text: string }>("capped"), { text: "x".repeat(100) }).catch((error: unknown) => error);
      expect(refused).to.be.instanceOf(PayloadError);
      expect((await client.enqueue(defineJob<{ text: string }>("capped"), { text: "small" })).duplicate).to.equal(false);
    } finally {
      await driver.close();
    }
  });

  it("leaves a pool it was given open", async () => {
    const pool = new pg.Pool({ connectionString: test.connectionString, max: 2 });
    try {
      const driver = registerPostgresDriver(rootContainer.createChildContainer(), { pool, schema: test.schema });
      expect(await driver.store.countByQueue({ queues: ["nothing"] })).to.have.length(1);
      await driver.close();
      expect((await pool.query<{ ok: number }>("SELECT 1 AS ok")).rows[0]?.ok).to.equal(1);
    } finally {
      await pool.end();
    }
  });

  it("passes queryTimeoutMs to its pools: a statement whose answer does not come in time fails on the client", async () => {
    const container = rootContainer.createChildContainer();
    const driver = registerPostgresDriver(container, {
      connectionString: test.connectionString,
      schema: test.schema,
      statementTimeoutMs: 0,
      queryTimeoutMs: 150,
    });
    try {
      const started = Date.now();
      const failure = await sql`SELECT pg_sleep(2)`.execute(driver.db).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      expect(failure?.message).to.equal("Query read timeout");
      expect(Date.now() - started).to.be.below(1_500);
      expect((await sql<{ ok: number }>`SELECT 1 AS ok`.execute(driver.db)).rows[0]?.ok, "the pool still answers").to.equal(1);
    } finally {
      await driver.close();
    }
  });

  it("validates its options before creating anything", () => {
    const container = rootContainer.createChildContainer();
    const connection = { connectionString: test.connectionString };
    expect(() => registerPostgresDriver(container, { ...connection, schema: "Bad Name" })).to.throw(InvalidNameError);
    expect(() => registerPostgresDriver(container, { ...connection, schema: 'x"; drop schema public; --' })).to.throw(InvalidNameError);
    expect(() => registerPostgresDriver(container, { ...connection, statementTimeoutMs: -5 })).to.throw(ConfigError, /`statementTimeoutMs`/);
    expect(() => registerPostgresDriver(container, { ...connection, queryTimeoutMs: -1 })).to.throw(ConfigError, /`queryTimeoutMs`/);
    expect(() => registerPostgresDriver(container, { ...connection, controlConnections: 1.5 })).to.throw(ConfigError, /`controlConnections`/);
    expect(() => registerPostgresDriver(container, { ...connection, sheme: "x" } as never)).to.throw(ConfigError, /`postgresDriver.sheme`/);
    expect(() => registerPostgresDriver(container, { connectionString: "" })).to.throw(ConfigError, /`connectionString`/);
    expect(() => registerPostgresDriver(container, { ...connection, sessionConnectionString: "" })).to.throw(ConfigError, /`sessionConnectionString`/);
    expect(() => registerPostgresDriver(container, { pool: new pg.Pool(), controlConnections: 2 })).to.throw(ConfigError, /`controlConnections`/);
    expect(container.isRegistered(JOB_STORE)).to.equal(false);
  });
});
