import { ConfigError } from "@stint/core";
import { applicationName } from "@stint/core/internal";
import { expect } from "chai";
import { sql } from "kysely";
import pg from "pg";
import { createDatabase, type DatabaseHandle } from "../src";
import { eventually, rejectionOf } from "@stint/core/testing";
import { namedStatement } from "../src/queries/named-statement";
import { startFreezableProxy } from "./support/freezable-proxy";

const connectionString = process.env["DATABASE_URL"] ?? "";

describe("createDatabase", () => {
  const handles: DatabaseHandle[] = [];
  const open = (options: Parameters<typeof createDatabase>[0]): DatabaseHandle => {
    const handle = createDatabase(options);
    handles.push(handle);
    return handle;
  };

  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.close();
  });

  it("names its connections stint:worker:<process identity> and sets a 30 s statement timeout by default", async () => {
    const { db } = open({ connectionString });
    const { rows } = await sql<{ application_name: string; statement_timeout: string }>`SELECT
      current_setting('application_name') AS application_name,
      current_setting('statement_timeout') AS statement_timeout`.execute(db);
    expect(rows[0]).to.deep.equal({ application_name: applicationName("worker"), statement_timeout: "30s" });
  });

  it("applies the application name and statement timeout it is given", async () => {
    const { db } = open({ connectionString, applicationName: "billing-worker", statementTimeoutMs: 1_500 });
    const { rows } = await sql<{ a: string; t: string }>`SELECT current_setting('application_name') AS a,
      current_setting('statement_timeout') AS t`.execute(db);
    expect(rows[0]).to.deep.equal({ a: "billing-worker", t: "1500ms" });
  });

  it("keeps int8 values as strings even when pg's global parser was changed", async () => {
    const original = pg.types.getTypeParser(pg.types.builtins.INT8) as (value: string) => unknown;
    pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number.parseInt(value, 10));
    try {
      const { db } = open({ connectionString });
      const { rows } = await sql<{ big: unknown; count: unknown }>`SELECT 9007199254740993::int8 AS big, count(*) AS count`.execute(db);
      expect(rows[0]).to.deep.equal({ big: "9007199254740993", count: "1" });
    } finally {
      pg.types.setTypeParser(pg.types.builtins.INT8, original);
    }
  });

  it("survives the server killing an idle connection and reports it", async () => {
    const reported: Error[] = [];
    const { db, pool } = open({ connectionString, maxConnections: 2, onPoolError: (error) => reported.push(error) });
    const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
    expect(pool.idleCount).to.equal(1);
    const killer = open({ connectionString, maxConnections: 1 });
    await sql`SELECT pg_terminate_backend(${rows[0]!.pid}::integer)`.execute(killer.db);
    await eventually(() => reported.length > 0, { timeoutMs: 5_000, intervalMs: 0, what: "the pool to report the killed connection" });
    const again = await sql<{ ok: number }>`SELECT 1 AS ok`.execute(db);
    expect(again.rows[0]?.ok).to.equal(1);
  });

  it("discards a connection whose query outlived the client-side timeout, so the next query gets a fresh one", async () => {
    const { db, pool } = open({ connectionString, maxConnections: 1, statementTimeoutMs: 0, queryTimeoutMs: 150 });
    const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
    const stalled = await rejectionOf(sql`SELECT pg_sleep(5)`.execute(db));
    expect(stalled.message).to.equal("Query read timeout");
    const started = Date.now();
    const again = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
    expect(again.rows[0]!.pid).to.not.equal(rows[0]!.pid);
    expect(Date.now() - started).to.be.below(1_000);
    expect(pool.totalCount).to.equal(1);
  });

  it("drops on close the sockets that a silent network keeps from closing", async () => {
    const proxy = await startFreezableProxy(connectionString);
    try {
      const handle = createDatabase({ connectionString: proxy.connectionString, maxConnections: 2 });
      const sockets: { destroyed: boolean }[] = [];
      handle.pool.on("connect", (client) => sockets.push((client as unknown as { connection: { stream: { destroyed: boolean } } }).connection.stream));
      await Promise.all([sql`SELECT pg_sleep(0.05)`.execute(handle.db), sql`SELECT pg_sleep(0.05)`.execute(handle.db)]);
      expect(sockets).to.have.length(2);
      proxy.freeze();
      const started = Date.now();
      await handle.close();
      expect(Date.now() - started, "the sockets' close is waited for a second").to.be.within(900, 2_500);
      expect(sockets.map((socket) => socket.destroyed)).to.deep.equal([true, true]);
    } finally {
      await proxy.close();
    }
  });

  it("keeps TCP keep-alive on and, by default, gives up on an answer 5 s after the statement timeout", async () => {
    const proxy = await startFreezableProxy(connectionString);
    try {
      const { db, pool } = open({ connectionString: proxy.connectionString, maxConnections: 1, statementTimeoutMs: 300 });
      expect((pool as unknown as { options: { keepAlive?: boolean } }).options).to.include({ keepAlive: true });
      await sql`SELECT 1`.execute(db);
      proxy.freeze();
      const started = Date.now();
      const lost = await rejectionOf(sql`SELECT pg_sleep(10)`.execute(db));
      expect(lost.message).to.equal("Query read timeout");
      expect(Date.now() - started).to.be.within(5_250, 7_500);
    } finally {
      await proxy.close();
    }
  });

  it("times each statement's answer from when that statement was sent, however busy the connection was before", async () => {
    const { db, statements } = open({ connectionString, maxConnections: 1, statementTimeoutMs: 0, queryTimeoutMs: 500 });
    // Back to back on one connection: together they outlast the timeout, each alone does not.
    for (let i = 0; i < 3; i += 1) await sql`SELECT pg_sleep(0.3)`.execute(db);
    const started = Date.now();
    const stalled = await rejectionOf(sql`SELECT pg_sleep(5)`.execute(db));
    expect(stalled.message).to.equal("Query read timeout");
    expect(Date.now() - started).to.be.within(450, 1_500);
    // The hot statements are watched the same way.
    const hot = await rejectionOf(statements.run({ text: "SELECT pg_sleep(5)", values: [] }));
    expect(hot.message).to.equal("Query read timeout");
    expect((await sql<{ ok: number }>`SELECT 1 AS ok`.execute(db)).rows[0]?.ok).to.equal(1);
  });

  it("prepares the hot statements by name, and none when told not to", async () => {
    const hot = namedStatement(sql<{ n: number }>`SELECT ${7}::integer AS n`);
    const namesOn = async (db: DatabaseHandle["db"]) =>
      (await sql<{ name: string }>`SELECT name FROM pg_prepared_statements`.execute(db)).rows.map((row) => row.name);
    const on = open({ connectionString, maxConnections: 1 });
    expect((await on.statements.run<{ n: number }>(hot)).rows[0]?.n).to.equal(7);
    await on.statements.run(hot);
    expect(await namesOn(on.db)).to.deep.equal([hot.name]);
    for (const preparedStatements of [false, "off"] as const) {
      const off = open({ connectionString, maxConnections: 1, preparedStatements });
      await off.statements.run(hot);
      expect(await namesOn(off.db)).to.deep.equal([]);
    }
  });

  it("uses a pool it is given and leaves it open on close", async () => {
    const pool = new pg.Pool({ connectionString, max: 1 });
    try {
      const handle = open({ pool });
      expect(handle.ownsPool).to.equal(false);
      await sql`SELECT 1`.execute(handle.db);
      await handle.close();
      const { rows } = await pool.query<{ ok: number }>("SELECT 1 AS ok");
      expect(rows[0]?.ok).to.equal(1);
      expect(pool.listenerCount("error"), "an error listener was attached").to.equal(1);
    } finally {
      await pool.end();
    }
  });

  it("ends a pool it created on close, once", async () => {
    const handle = createDatabase({ connectionString });
    await sql`SELECT 1`.execute(handle.db);
    await Promise.all([handle.close(), handle.close()]);
    expect(handle.pool.ended).to.equal(true);
    await rejectionOf(sql`SELECT 1`.execute(handle.db));
  });

  it("names the option it refuses", () => {
    const bad: [unknown, RegExp][] = [
      [{}, /`connection`/],
      [{ connectionString, pool: new pg.Pool() }, /`connection`/],
      [{ connectionString: "" }, /`connectionString`/],
      [{ pool: {} }, /`pool`/],
      [{ connectionString, statementTimeoutMs: -1 }, /`statementTimeoutMs`/],
      [{ connectionString, maxConnections: 0 }, /`maxConnections`/],
      [{ connectionString, maxconnections: 3 }, /`database.maxconnections`/],
      [{ pool: new pg.Pool(), statementTimeoutMs: 1_000 }, /`statementTimeoutMs`/],
      [{ connectionString, preparedStatements: "sometimes" }, /`preparedStatements`.*"auto", "on" or "off"/],
      [{ connectionString, onWarning: "loud" }, /`onWarning`/],
    ];
    for (const [options, message] of bad) {
      expect(() => createDatabase(options as Parameters<typeof createDatabase>[0]), message.source).to.throw(ConfigError, message);
    }
  });
});
