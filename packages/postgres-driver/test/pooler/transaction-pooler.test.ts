import { defineJob, JobClient } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { eventually, rejectionOf } from "@stint/core/testing";
import { ThrowawayPgBouncer } from "@stint/throwaway-postgres";
import { expect } from "chai";
import { sql } from "kysely";
import { container as rootContainer } from "tsyringe";
import {
  createDatabase,
  migrate,
  PostgresLeaderLock,
  PostgresWakeupSource,
  registerPostgresDriver,
  SessionCheck,
  type DatabaseHandle,
  type DriverWarning,
} from "../../src";
import { createTestSchema, type TestSchema } from "../../src/testing";

const Ping = defineJob<{ readonly n: number }>("pooled-ping");

describe("behind PgBouncer in transaction mode", () => {
  let test: TestSchema;
  let transactions: ThrowawayPgBouncer;
  let sessions: ThrowawayPgBouncer;
  const closing: (() => Promise<unknown>)[] = [];

  before(async () => {
    test = await createTestSchema();
    // Stock PgBouncers: no startup parameter ignored, one per pool mode.
    [transactions, sessions] = await Promise.all([
      ThrowawayPgBouncer.start({ upstream: test.connectionString, poolMode: "transaction", poolSize: 4 }),
      ThrowawayPgBouncer.start({ upstream: test.connectionString, poolMode: "session", poolSize: 4 }),
    ]);
  });
  after(async () => {
    await Promise.all([transactions?.stop(), sessions?.stop()]);
    await test?.drop();
  });
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  const open = (options: Omit<Parameters<typeof createDatabase>[0], "connectionString"> = {}): { database: DatabaseHandle; warnings: DriverWarning[] } => {
    const warnings: DriverWarning[] = [];
    const database = createDatabase({ connectionString: transactions.connectionString, onWarning: (warning) => warnings.push(warning), ...options });
    closing.push(() => database.close());
    return { database, warnings };
  };

  describe("SessionCheck", () => {
    const kindOf = async (connectionString: string, warnings: DriverWarning[] = []): Promise<string> =>
      new SessionCheck({ connectionString, applicationName: "stint-test:check", onWarning: (warning) => warnings.push(warning) }).kind();

    it("tells PostgreSQL itself, a session pooler and a transaction pooler apart, and warns only about the last", async () => {
      const warnings: DriverWarning[] = [];
      expect(await kindOf(test.connectionString, warnings)).to.equal("direct");
      expect(await kindOf(sessions.connectionString, warnings)).to.equal("session-pooler");
      expect(await kindOf(transactions.connectionString, warnings)).to.equal("transaction-pooler");
      expect(warnings.map((warning) => warning.code)).to.deep.equal(["STINT_NO_SESSIONS"]);
      expect(warnings[0]!.message).to.include(`127.0.0.1:${transactions.port}`).and.include("STINT_SESSION_DATABASE_URL");
    });
  });

  describe("createDatabase", () => {
    it("connects although PgBouncer refuses the statement_timeout startup parameter, saying so once; the read timeout still holds", async () => {
      const { database, warnings } = open({ maxConnections: 2, statementTimeoutMs: 200, queryTimeoutMs: 500 });
      const { rows } = await sql<{ ok: number }>`SELECT 1 AS ok`.execute(database.db);
      expect(rows).to.deep.equal([{ ok: 1 }]);
      await Promise.all([1, 2, 3].map(() => sql`SELECT pg_sleep(0.01)`.execute(database.db)));
      expect(warnings.map((warning) => warning.code)).to.deep.equal(["STINT_NO_STATEMENT_TIMEOUT"]);
      expect(warnings[0]!.message).to.include("ALTER ROLE");
      expect(database.statements.statementTimeoutRefused).to.equal(true);
      const stalled = await rejectionOf(sql`SELECT pg_sleep(3)`.execute(database.db));
      expect(stalled.message).to.equal("Query read timeout");
    });

    it("auto: hot statements on several connections switch to unnamed ones at the first clash, and none fails", async () => {
      const { database, warnings } = open({ maxConnections: 8 });
      const named = { name: "stint_test_pooled", text: "SELECT $1::integer * 2 AS n", values: [21] } as const;
      const answers = await Promise.all(Array.from({ length: 40 }, () => database.statements.run<{ n: number }>(named)));
      expect(answers.every((answer) => answer.rows[0]?.n === 42)).to.equal(true);
      for (let round = 0; round < 20; round += 1) expect((await database.statements.run<{ n: number }>(named)).rows[0]?.n).to.equal(42);
      expect(database.statements.preparedStatements).to.deep.equal({ mode: "auto", named: false });
      expect(warnings.filter((warning) => warning.code === "STINT_UNNAMED_STATEMENTS")).to.have.length(1);
    });
  });

  it("migrates through the pooler, twice, with nothing left locked between the runs", async () => {
    const { database } = open({ maxConnections: 2 });
    const schema = `${test.schema}_again`;
    try {
      const first = await migrate(database.db, { schema });
      const second = await migrate({ connectionString: transactions.connectionString, onWarning: () => undefined }, { schema });
      expect(first.applied).to.have.length(first.version);
      expect(second).to.deep.equal({ schema, applied: [], version: first.version, movedFinishedJobs: 0, interrupted: false });
    } finally {
      await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(test.db);
    }
  });

  describe("the leader lock", () => {
    const lock = (leaseMs = 15_000): PostgresLeaderLock => {
      const created = new PostgresLeaderLock({
        connectionString: transactions.connectionString,
        schema: test.schema,
        leaseMs,
        onError: () => undefined,
        onWarning: () => undefined,
      });
      closing.push(() => created.close());
      return created;
    };
    const leases = async (): Promise<readonly { holder: string }[]> =>
      (await sql<{ holder: string }>`SELECT holder FROM ${sql.id(test.schema, "leader_leases")}`.execute(test.db)).rows;

    it("elects one holder with a lease row, hands it over on release, and to another once it has expired", async () => {
      const [first, second] = [lock(), lock()];
      expect(await first.tryAcquire()).to.equal(true);
      expect(await second.tryAcquire()).to.equal(false);
      expect([first.mechanism, second.mechanism]).to.deep.equal(["lease", "lease"]);
      expect(await leases()).to.have.length(1);
      await first.release();
      expect(first.held).to.equal(false);
      expect(await leases()).to.have.length(0);
      expect(await second.tryAcquire()).to.equal(true);
      // A holder that stopped renewing (a crashed process): its lease lapses and the row goes to the next.
      await sql`UPDATE ${sql.id(test.schema, "leader_leases")} SET expires_at = now() - interval '1 second'`.execute(test.db);
      const third = lock();
      expect(await third.tryAcquire()).to.equal(true);
      expect(third.held).to.equal(true);
    });

    it("renews its lease while it holds it, and stops counting itself leader when another took the row", async () => {
      const holder = lock(900);
      expect(await holder.tryAcquire()).to.equal(true);
      const { rows: before } = await sql<{ expires: Date }>`SELECT expires_at AS expires FROM ${sql.id(test.schema, "leader_leases")}`.execute(test.db);
      await eventually(
        async () => {
          const { rows } = await sql<{ expires: Date }>`SELECT expires_at AS expires FROM ${sql.id(test.schema, "leader_leases")}`.execute(test.db);
          return rows[0]!.expires.getTime() > before[0]!.expires.getTime();
        },
        { timeoutMs: 5_000, what: "a renewal" },
      );
      expect(holder.held).to.equal(true);
      await sql`UPDATE ${sql.id(test.schema, "leader_leases")} SET holder = 'someone else'`.execute(test.db);
      await eventually(() => !holder.held, { timeoutMs: 5_000, what: "the holder to notice it lost the row" });
    });
  });

  it("registerPostgresDriver: one check for the three session clients, waits and wake-ups by polling, the leader by lease, said once", async () => {
    const warnings: DriverWarning[] = [];
    const container = rootContainer.createChildContainer();
    const driver = registerPostgresDriver(container, {
      connectionString: transactions.connectionString,
      schema: test.schema,
      maxConnections: 4,
      env: {},
      onWarning: (warning) => warnings.push(warning),
    });
    closing.push(() => driver.close());
    const subscription = await driver.wakeupSource!.subscribe([Ping.name], { onWake: () => undefined });
    closing.push(() => subscription.close());
    expect(driver.wakeupSource!.listening).to.equal(false);
    expect(await driver.leaderLock!.tryAcquire()).to.equal(true);
    expect(driver.leaderLock!.mechanism).to.equal("lease");
    // A wait resolves by polling when its job finishes.
    const client = new JobClient(driver.store);
    const job = await client.enqueue(Ping, { n: 1 });
    const waiting = client.waitFor(job, { timeoutMs: 20_000 });
    const [claimed] = await driver.store.claimBatch({ queue: Ping.name, workerId: "w", limit: 1, leaseMs: 60_000 });
    await driver.store.completeJobs({ workerId: "w", jobs: [{ id: claimed!.id, attempt: claimed!.attempt, resultJson: null, durationMs: 1 }] });
    await waiting;
    expect(warnings.map((warning) => warning.code).sort()).to.deep.equal(["STINT_NO_SESSIONS", "STINT_NO_STATEMENT_TIMEOUT"].sort());
    expect(driver.settings.preparedStatements).to.deep.equal({ value: "auto", source: "default" });
  });

  it("subscribes to wake-ups through a pooler without waiting for the notification test, and listens once a session pooler is found", async () => {
    for (const [bouncer, listens] of [
      [transactions, false],
      [sessions, true],
    ] as const) {
      const wakeups = new PostgresWakeupSource({ connectionString: bouncer.connectionString, schema: test.schema, onWarning: () => undefined });
      closing.push(() => wakeups.close());
      const woken: string[] = [];
      const started = performance.now();
      const subscription = await wakeups.subscribe([Ping.name], { onWake: (queue) => woken.push(queue) });
      closing.push(() => subscription.close());
      expect(performance.now() - started, "the subscription did not wait for the second of the notification test").to.be.below(800);
      if (listens) {
        // Once listening it wakes the subscriber for what it may have missed meanwhile, then for each new job.
        await eventually(() => wakeups.listening && woken.length > 0, { timeoutMs: 10_000, what: "the LISTEN through the session pooler" });
        woken.length = 0;
        await test.store.enqueue(buildNewJob(Ping, { n: 3 }));
        await eventually(() => woken.length > 0, { timeoutMs: 5_000, what: "a wake-up through the session pooler" });
      } else {
        await new SessionCheck({ connectionString: bouncer.connectionString, applicationName: "stint-test:check", onWarning: () => undefined }).kind();
        expect(wakeups.listening).to.equal(false);
      }
    }
  });

  it("with a session URL past the pooler, wake-ups LISTEN and the leader takes the advisory lock", async () => {
    const container = rootContainer.createChildContainer();
    const driver = registerPostgresDriver(container, {
      connectionString: transactions.connectionString,
      schema: test.schema,
      env: { STINT_SESSION_DATABASE_URL: test.connectionString },
      onWarning: () => undefined,
    });
    closing.push(() => driver.close());
    const woken: string[] = [];
    const subscription = await driver.wakeupSource!.subscribe([Ping.name], { onWake: (queue) => woken.push(queue) });
    closing.push(() => subscription.close());
    expect(driver.wakeupSource!.listening).to.equal(true);
    await driver.store.enqueue(buildNewJob(Ping, { n: 2 }));
    await eventually(() => woken.length > 0, { timeoutMs: 5_000, what: "a wake-up through the direct session connection" });
    expect(await driver.leaderLock!.tryAcquire()).to.equal(true);
    expect(driver.leaderLock!.mechanism).to.equal("advisory-lock");
    expect(driver.settings.sessionConnectionString).to.deep.equal({ value: test.connectionString, source: "environment" });
  });
});
