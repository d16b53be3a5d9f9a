import { expect } from "chai";
import { sql } from "kysely";
import pg from "pg";
import { createDatabase } from "../src";
import { HotConnection } from "../src/hot-connection";
import { directQueriesOf } from "../src/queries/direct-queries";
import { eventually } from "@stint/core/testing";

const connectionString = process.env["DATABASE_URL"] ?? "";

describe("HotConnection", () => {
  let pool: pg.Pool;
  let hot: HotConnection;

  beforeEach(() => {
    pool = new pg.Pool({ connectionString, max: 4 });
    pool.on("error", () => undefined);
    hot = new HotConnection(pool);
  });
  afterEach(async () => {
    hot.close();
    await pool.end();
  });

  const pidOf = async (statement = "SELECT pg_backend_pid() AS pid"): Promise<number> => (await hot.query<{ pid: number }>(statement, [])).rows[0]!.pid;
  /** Whether the hot connection is checked out: the only client the pool does not hold idle. */
  const kept = (): boolean => pool.totalCount - pool.idleCount === 1;

  it("keeps the connection its first statement used, and sends the next statements there", async () => {
    const first = await pidOf();
    await eventually(kept, { timeoutMs: 5_000, intervalMs: 0, what: "the connection to be kept" });
    expect(pool.totalCount, "no connection opened for it").to.equal(1);
    expect([await pidOf(), await pidOf(), await pidOf()]).to.deep.equal([first, first, first]);
  });

  it("sends statements that come while it is busy through the pool, so none waits behind another", async () => {
    const kept0 = await pidOf();
    await eventually(kept, { timeoutMs: 5_000, intervalMs: 0, what: "the connection to be kept" });
    const pids = await Promise.all([1, 2, 3].map(() => pidOf("SELECT pg_backend_pid() AS pid, pg_sleep(0.1)")));
    expect(new Set(pids).size, "three connections at once").to.equal(3);
    expect(pids[0]).to.equal(kept0);
  });

  it("keeps one connection however many statements come before it is kept, and leaks none", async () => {
    await Promise.all(Array.from({ length: 12 }, () => pidOf("SELECT pg_backend_pid() AS pid, pg_sleep(0.02)")));
    await eventually(kept, { timeoutMs: 5_000, intervalMs: 0, what: "the connection to be kept" });
    await Promise.all(Array.from({ length: 12 }, () => pidOf("SELECT pg_backend_pid() AS pid, pg_sleep(0.02)")));
    await pidOf();
    expect(pool.totalCount - pool.idleCount, "only the kept connection is checked out").to.equal(1);
    expect(pool.waitingCount).to.equal(0);
  });

  it("gives up a connection the server terminated and keeps another, failing no statement sent after", async () => {
    const victim = await pidOf();
    await eventually(kept, { timeoutMs: 5_000, intervalMs: 0, what: "the connection to be kept" });
    await pool.query("SELECT pg_terminate_backend($1::integer)", [victim]);
    await eventually(() => pool.totalCount === pool.idleCount, { timeoutMs: 5_000, intervalMs: 0, what: "the terminated connection to be given up" });
    const next = await pidOf();
    expect(next).to.not.equal(victim);
    await eventually(kept, { timeoutMs: 5_000, intervalMs: 0, what: "a new connection to be kept" });
    expect(await pidOf()).to.equal(next);
  });

  it("gives up the connection after a statement on it fails, as the pool does", async () => {
    const first = await pidOf();
    await eventually(kept, { timeoutMs: 5_000, intervalMs: 0, what: "the connection to be kept" });
    const failure = await hot.query("SELECT 1 / 0", []).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).to.contain("division by zero");
    expect(await pidOf()).to.not.equal(first);
  });

  it("gives the connection back on close, so the pool can end", async () => {
    await pidOf();
    await eventually(kept, { timeoutMs: 5_000, intervalMs: 0, what: "the connection to be kept" });
    hot.close();
    expect(pool.idleCount).to.equal(pool.totalCount);
    await pidOf(); // after close, through the pool
    expect(pool.idleCount).to.equal(pool.totalCount);
  });
});

describe("createDatabase's hot statements", () => {
  it("go to a kept connection on a pool it creates of at least 3, and to the pool itself otherwise", async () => {
    const large = createDatabase({ connectionString, maxConnections: 3 });
    const small = createDatabase({ connectionString, maxConnections: 2 });
    const given = new pg.Pool({ connectionString, max: 10 });
    const borrowed = createDatabase({ pool: given });
    try {
      expect(directQueriesOf(large.db)).to.be.instanceOf(HotConnection);
      expect(directQueriesOf(small.db)).to.equal(small.pool);
      expect(directQueriesOf(borrowed.db)).to.equal(given);
      await sql`SELECT 1`.execute(large.db);
    } finally {
      await Promise.all([large.close(), small.close(), borrowed.close()]);
      await given.end();
    }
  });
});
