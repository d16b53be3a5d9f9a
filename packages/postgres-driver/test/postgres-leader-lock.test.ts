import { ConfigError } from "@stint/core";
import { expect } from "chai";
import { sql } from "kysely";
import { PostgresLeaderLock } from "../src";
import { createTestSchema, type TestSchema } from "../src/testing";
import { eventually, rejectionOf } from "@stint/core/testing";
import { startFreezableProxy } from "./support/freezable-proxy";

describe("PostgresLeaderLock", () => {
  let test: TestSchema;
  let locks: PostgresLeaderLock[];

  beforeEach(async () => {
    test = await createTestSchema();
    locks = [];
  });
  afterEach(async () => {
    await Promise.all(locks.map((lock) => lock.close()));
    await test.drop();
  });

  /** A lock of the test's schema whose connection is named `<schema>:<tag>`. */
  function lock(tag: string, name?: string): PostgresLeaderLock {
    const created = new PostgresLeaderLock({
      connectionString: test.connectionString,
      schema: test.schema,
      applicationName: `${test.schema}:${tag}`,
      onError: () => undefined,
      ...(name === undefined ? {} : { name }),
    });
    locks.push(created);
    return created;
  }

  async function pidsOf(tag: string): Promise<number[]> {
    const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity
      WHERE application_name = ${`${test.schema}:${tag}`}`.execute(test.db);
    return rows.map((row) => row.pid);
  }

  it("lets exactly one of two processes hold the lock", async () => {
    const [a, b] = [lock("a"), lock("b")];
    const results = await Promise.all([a.tryAcquire(), b.tryAcquire()]);
    expect(results.filter(Boolean)).to.have.length(1);
    const [holder, other] = results[0] ? [a, b] : [b, a];
    expect(holder.held).to.equal(true);
    expect(other.held).to.equal(false);
    expect(await holder.tryAcquire()).to.equal(true);
    expect(await other.tryAcquire()).to.equal(false);
  });

  it("connects only when first asked, and release() gives the lock to the other process", async () => {
    const [a, b] = [lock("a"), lock("b")];
    expect(await pidsOf("a")).to.deep.equal([]);
    expect(await a.tryAcquire()).to.equal(true);
    expect(await pidsOf("a")).to.have.length(1);
    expect(await b.tryAcquire()).to.equal(false);
    await a.release();
    await a.release();
    expect(a.held).to.equal(false);
    await eventually(async () => (await pidsOf("a")).length === 0, { timeoutMs: 10_000, what: "the released lock's connection to end" });
    expect(await b.tryAcquire()).to.equal(true);
    expect(await a.tryAcquire()).to.equal(false);
  });

  it("is lost when its connection is terminated, and the other process takes over", async () => {
    const [a, b] = [lock("a"), lock("b")];
    expect(await a.tryAcquire()).to.equal(true);
    expect(await b.tryAcquire()).to.equal(false);
    const [pid] = await pidsOf("a");
    await sql`SELECT pg_terminate_backend(${pid}::integer)`.execute(test.db);
    await eventually(() => !a.held, { timeoutMs: 10_000, what: "the holder to notice it lost its connection" });
    await eventually(() => b.tryAcquire(), { timeoutMs: 10_000, what: "the other process to take the lock" });
    expect(await a.tryAcquire()).to.equal(false);
    expect(await pidsOf("a")).to.have.length(1);
  });

  it("reconnects on the next tryAcquire after its session was terminated", async () => {
    const a = lock("a");
    expect(await a.tryAcquire()).to.equal(true);
    const [pid] = await pidsOf("a");
    await sql`SELECT pg_terminate_backend(${pid}::integer)`.execute(test.db);
    await eventually(() => !a.held, { timeoutMs: 10_000, what: "the holder to notice it lost its connection" });
    expect(await a.tryAcquire()).to.equal(true);
    expect(await pidsOf("a"))
      .to.have.length(1)
      .and.not.include(pid);
  });

  it("notices on tryAcquire a connection that hangs silently, and does not take the lock while the old session lives", async () => {
    const proxy = await startFreezableProxy(test.connectionString);
    try {
      const a = new PostgresLeaderLock({
        connectionString: proxy.connectionString,
        schema: test.schema,
        applicationName: `${test.schema}:a`,
        livenessTimeoutMs: 300,
        onError: () => undefined,
      });
      locks.push(a);
      expect(await a.tryAcquire()).to.equal(true);
      proxy.freeze();
      expect(await a.tryAcquire(), "the hung session still holds the lock on the server").to.equal(false);
      expect(a.held).to.equal(false);
      proxy.cut();
      await eventually(() => a.tryAcquire(), { timeoutMs: 10_000, what: "the lock to be free once the server drops the hung session" });
    } finally {
      await proxy.close();
    }
  });

  it("closes within a bound while it holds the lock over a connection that hangs silently", async () => {
    const proxy = await startFreezableProxy(test.connectionString);
    try {
      const a = new PostgresLeaderLock({ connectionString: proxy.connectionString, schema: test.schema, onError: () => undefined });
      expect(await a.tryAcquire()).to.equal(true);
      proxy.freeze();
      const started = Date.now();
      await a.close();
      expect(Date.now() - started, "the unlock and the end are given up after a second, not after the liveness timeout").to.be.within(900, 1_800);
      expect(a.held).to.equal(false);
    } finally {
      await proxy.close();
    }
  });

  it("keeps locks of different names and schemas apart", async () => {
    expect(await lock("a").tryAcquire()).to.equal(true);
    expect(await lock("b", "reports").tryAcquire()).to.equal(true);
    const other = new PostgresLeaderLock({ connectionString: test.connectionString, schema: `${test.schema}_x` });
    locks.push(other);
    expect(await other.tryAcquire()).to.equal(true);
    expect(lock("c").key).to.not.equal(lock("d", "reports").key);
  });

  it("refuses use after close() and bad options", async () => {
    const a = lock("a");
    await a.close();
    expect(await rejectionOf(a.tryAcquire())).to.be.instanceOf(ConfigError);
    expect(() => new PostgresLeaderLock({ connectionString: test.connectionString, name: "" })).to.throw(ConfigError, /`name`/);
    expect(() => new PostgresLeaderLock({ connectionString: test.connectionString, livenessTimeoutMs: 0 })).to.throw(ConfigError);
    expect(() => new PostgresLeaderLock({ connectionString: test.connectionString, schema: "Bad" })).to.throw(/schema/);
  });
});
