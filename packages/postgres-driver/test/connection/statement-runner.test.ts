import { expect } from "chai";
import { sql } from "kysely";
import pg from "pg";
import { rejectionOf } from "@stint/core/testing";
import { createDatabase, interpretError } from "../../src";
import type { DriverWarning } from "../../src/connection/driver-warning";
import type { PreparedStatementsMode } from "../../src/connection/prepared-statements";
import { PoolStatementRunner } from "../../src/connection/statement-runner";

const connectionString = process.env["DATABASE_URL"] ?? "";

describe("PoolStatementRunner", () => {
  let pool: pg.Pool;
  let runner: PoolStatementRunner;
  let warnings: DriverWarning[];

  const open = (options: { max?: number; preparedStatements?: PreparedStatementsMode; keepConnection?: boolean } = {}): void => {
    pool = new pg.Pool({ connectionString, max: options.max ?? 4 });
    pool.on("error", () => undefined);
    warnings = [];
    runner = new PoolStatementRunner({
      pool,
      preparedStatements: options.preparedStatements ?? "on",
      readTimeoutMs: 0,
      keepConnection: options.keepConnection ?? true,
      warn: (warning) => warnings.push(warning),
    });
  };
  afterEach(async () => {
    runner.close();
    await pool.end();
  });

  const pidOf = async (text = "SELECT pg_backend_pid() AS pid"): Promise<number> => (await runner.run<{ pid: number }>({ text, values: [] })).rows[0]!.pid;
  /** Whether a connection is kept: the only client the pool does not hold idle. */
  const kept = (): boolean => pool.totalCount - pool.idleCount === 1;
  const preparedNames = async (): Promise<string[]> =>
    (await runner.run<{ name: string }>({ text: "SELECT name FROM pg_prepared_statements ORDER BY name", values: [] })).rows.map((row) => row.name);

  describe("the kept connection", () => {
    beforeEach(() => open());

    it("keeps the connection its first statement used, and sends the next statements there", async () => {
      const first = await pidOf();
      expect(kept(), "kept once its first statement is answered").to.equal(true);
      expect(pool.totalCount, "no connection opened for it").to.equal(1);
      expect([await pidOf(), await pidOf(), await pidOf()]).to.deep.equal([first, first, first]);
    });

    it("sends statements that come while it is busy through the pool, so none waits behind another", async () => {
      const kept0 = await pidOf();
      const pids = await Promise.all([1, 2, 3].map(() => pidOf("SELECT pg_backend_pid() AS pid, pg_sleep(0.1)")));
      expect(new Set(pids).size, "three connections at once").to.equal(3);
      expect(pids[0]).to.equal(kept0);
    });

    it("keeps one connection however many statements come at once, and leaks none", async () => {
      await Promise.all(Array.from({ length: 12 }, () => pidOf("SELECT pg_backend_pid() AS pid, pg_sleep(0.02)")));
      await Promise.all(Array.from({ length: 12 }, () => pidOf("SELECT pg_backend_pid() AS pid, pg_sleep(0.02)")));
      await pidOf();
      expect(pool.totalCount - pool.idleCount, "only the kept connection is checked out").to.equal(1);
      expect(pool.waitingCount).to.equal(0);
    });

    it("gives up a connection the server terminated and keeps another, failing no statement sent after", async () => {
      const victim = await pidOf();
      await pool.query("SELECT pg_terminate_backend($1::integer)", [victim]);
      const next = await pidOf().catch(() => pidOf());
      expect(next).to.not.equal(victim);
      expect(await pidOf()).to.equal(next);
      expect(kept()).to.equal(true);
    });

    it("gives up the connection after a statement on it fails, as the pool does", async () => {
      const first = await pidOf();
      const failure = await rejectionOf(runner.run({ text: "SELECT 1 / 0", values: [] }));
      expect(failure.message).to.contain("division by zero");
      expect(await pidOf()).to.not.equal(first);
    });

    it("gives the connection back on close, so the pool can end", async () => {
      await pidOf();
      runner.close();
      expect(pool.idleCount).to.equal(pool.totalCount);
      await pidOf(); // after close, through the pool
      expect(pool.idleCount).to.equal(pool.totalCount);
    });
  });

  describe("prepared statements", () => {
    const named = { name: "stint_test_sum", text: "SELECT $1::integer + 1 AS n", values: [41] } as const;

    it("on: prepares a named statement once per connection", async () => {
      open({ max: 1, keepConnection: false });
      expect((await runner.run<{ n: number }>(named)).rows).to.deep.equal([{ n: 42 }]);
      expect((await runner.run<{ n: number }>({ ...named, values: [1] })).rows).to.deep.equal([{ n: 2 }]);
      expect(await preparedNames()).to.deep.equal(["stint_test_sum"]);
    });

    it("off: sends every statement unnamed", async () => {
      open({ max: 1, keepConnection: false, preparedStatements: "off" });
      await runner.run(named);
      expect(await preparedNames()).to.deep.equal([]);
      expect(runner.preparedStatements).to.deep.equal({ mode: "off", named: false });
    });

    it("auto: a name the server connection already holds (42P05) sends the statement again unnamed, and every later one, said once", async () => {
      open({ max: 1, keepConnection: false, preparedStatements: "auto" });
      // What a transaction pooler does: another client prepared the same name on this server connection.
      await runner.run({ text: `PREPARE stint_test_sum AS SELECT 0 AS n`, values: [] });
      expect((await runner.run<{ n: number }>(named)).rows).to.deep.equal([{ n: 42 }]);
      expect(runner.preparedStatements).to.deep.equal({ mode: "auto", named: false });
      await runner.run({ name: "stint_test_other", text: "SELECT 1 AS one", values: [] });
      // The failed statement's connection was discarded (as after any failure); nothing was prepared after the switch.
      expect(await preparedNames()).to.deep.equal([]);
      expect(warnings.map((warning) => warning.code)).to.deep.equal(["STINT_UNNAMED_STATEMENTS"]);
      expect(warnings[0]!.message)
        .to.match(/42P05/)
        .and.match(/STINT_PREPARED_STATEMENTS=off/)
        .and.match(/no statement was lost/);
    });

    it("auto: a name the client prepared but the server connection lacks (26000) sends the statement again unnamed", async () => {
      open({ max: 1, keepConnection: false, preparedStatements: "auto" });
      await runner.run(named);
      // What a transaction pooler does: the next statement meets a server connection that never saw the name.
      await runner.run({ text: "DEALLOCATE stint_test_sum", values: [] });
      expect((await runner.run<{ n: number }>({ ...named, values: [9] })).rows).to.deep.equal([{ n: 10 }]);
      expect(runner.preparedStatements.named).to.equal(false);
      expect(warnings[0]?.message).to.match(/26000/);
    });

    it("on: a pooler's clash is an error, and the mode stays", async () => {
      open({ max: 1, keepConnection: false, preparedStatements: "on" });
      await runner.run({ text: `PREPARE stint_test_sum AS SELECT 0 AS n`, values: [] });
      const clash = await rejectionOf(runner.run(named));
      expect((clash as { code?: string }).code).to.equal("42P05");
      expect(interpretError(clash, "claimBatch").message)
        .to.match(/transaction pooler/)
        .and.match(/STINT_PREPARED_STATEMENTS=auto/);
      expect(runner.preparedStatements.named).to.equal(true);
      expect(warnings).to.deep.equal([]);
    });
  });
});

describe("createDatabase's statement runner", () => {
  it("keeps a connection on a pool it creates of at least 3, never on a smaller one or a pool passed in", async () => {
    const large = createDatabase({ connectionString, maxConnections: 3 });
    const small = createDatabase({ connectionString, maxConnections: 2 });
    const given = new pg.Pool({ connectionString, max: 10 });
    const borrowed = createDatabase({ pool: given });
    const checkedOut = (pool: pg.Pool): number => pool.totalCount - pool.idleCount;
    try {
      for (const handle of [large, small, borrowed]) await handle.statements.run({ text: "SELECT 1", values: [] });
      expect([checkedOut(large.pool), checkedOut(small.pool), checkedOut(given)]).to.deep.equal([1, 0, 0]);
      // Kysely's statements go through the same runner (and its read timeout), on connections of the pool.
      await sql`SELECT 1`.execute(large.db);
      expect(checkedOut(large.pool)).to.equal(1);
    } finally {
      await Promise.all([large.close(), small.close(), borrowed.close()]);
      await given.end();
    }
  });
});
