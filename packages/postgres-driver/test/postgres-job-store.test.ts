import { ConfigError, ErrorCode, InvalidNameError, errorCodeOf } from "@stint/core";
import {
  describeJobStoreConformance,
  describeScheduleStoreConformance,
  eventually,
  newJob,
  rejectionOf,
  type JobStoreHarness,
  type ScheduleStoreHarness,
} from "@stint/core/testing";
import { expect } from "chai";
import { sql, type Kysely, type Transaction } from "kysely";
import { createDatabase, PostgresJobStore } from "../src";
import { createTestSchema, type TestSchema } from "../src/testing";

async function postgresHarness(): Promise<ScheduleStoreHarness<Kysely<any> | Transaction<any>>> {
  const test = await createTestSchema();
  return {
    store: test.store,
    withTransaction: (work) => test.db.transaction().execute((trx) => work(trx)),
    waitUntilPast: (instant) => waitForDatabaseClock(test.db, instant),
    // The database's clock cannot move: the schedules' stored times move back instead.
    passScheduleTime: (ms) => moveScheduleTimesBack(test, ms),
    close: () => test.drop(),
  };
}

describeJobStoreConformance("PostgresJobStore", postgresHarness);
describeScheduleStoreConformance("PostgresJobStore", postgresHarness);

/**
 * The store over a schema where every job that finishes stays in `jobs`,
 * as the jobs a version before migration 15 finished do until they are
 * moved: every rule of the suite holds for them too.
 */
async function legacyHistoryHarness(): Promise<JobStoreHarness<Kysely<any> | Transaction<any>>> {
  const test = await createTestSchema();
  await keepFinishedJobsInJobs(test);
  return {
    store: test.store,
    withTransaction: (work) => test.db.transaction().execute((trx) => work(trx)),
    waitUntilPast: (instant) => waitForDatabaseClock(test.db, instant),
    close: () => test.drop(),
  };
}

describeJobStoreConformance("PostgresJobStore with finished jobs left in jobs", legacyHistoryHarness);

/**
 * Puts each row the store moves to `finished_jobs` into `jobs` instead, where a worker older than migration 15 leaves it;
 * but a workflow step, which no such worker ever ran (workflows came with migration 26), goes where it goes.
 */
async function keepFinishedJobsInJobs(test: TestSchema): Promise<void> {
  const keep = sql.id(test.schema, "keep_finished_in_jobs");
  await sql`CREATE FUNCTION ${keep}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.workflow_id IS NOT NULL THEN
    RETURN NEW;
  END IF;
  INSERT INTO ${sql.id(test.schema, "jobs")} VALUES (NEW.*);
  RETURN NULL;
END $$`.execute(test.db);
  await sql`CREATE TRIGGER keep_finished_in_jobs BEFORE INSERT ON ${sql.id(test.schema, "finished_jobs")}
  FOR EACH ROW EXECUTE FUNCTION ${keep}()`.execute(test.db);
}

/** Moves every stored time of every schedule `ms` into the past. */
async function moveScheduleTimesBack(test: TestSchema, ms: number): Promise<void> {
  const by = sql`${ms}::double precision * interval '1 millisecond'`;
  await sql`UPDATE ${sql.id(test.schema, "schedules")}
   SET declared_at = declared_at - ${by}, next_run_at = next_run_at - ${by},
       last_fired_at = last_fired_at - ${by}, updated_at = updated_at - ${by}`.execute(test.db);
}

/** Polls the database clock (no sleeping) until it is past `instant`. */
async function waitForDatabaseClock(db: Kysely<any>, instant: Date): Promise<void> {
  await eventually(async () => (await sql<{ past: boolean }>`SELECT now() > ${instant}::timestamptz AS past`.execute(db)).rows[0]?.past, {
    timeoutMs: 10_000,
    intervalMs: 0,
    what: `the database clock to pass ${instant.toISOString()}`,
  });
}

describe("PostgresJobStore", () => {
  let test: TestSchema;

  before(async () => {
    test = await createTestSchema();
  });
  after(async () => {
    await test.drop();
  });

  it("refuses an invalid schema name when constructed, before any SQL", () => {
    for (const schema of ['x"; drop schema public; --', "Public", "", "a".repeat(64)]) {
      expect(() => new PostgresJobStore({ db: test.db, schema })).to.throw(InvalidNameError);
    }
  });

  it("refuses options that are not a Kysely instance", () => {
    expect(() => new PostgresJobStore({ db: {} as Kysely<any> })).to.throw(ConfigError, /`db`/);
    expect(() => new PostgresJobStore({ db: test.db, controlDb: 42 as unknown as Kysely<any> })).to.throw(ConfigError, /`controlDb`/);
  });

  it("refuses a transaction argument that is no transaction it knows", async () => {
    const error = await rejectionOf(test.store.enqueue(newJob("q", {}), { query: () => undefined } as unknown as Kysely<any>));
    expect(error).to.be.instanceOf(ConfigError);
    expect(error.message).to.contain("`transaction`");
  });

  it("refuses a claim with a limit below 1", async () => {
    const error = await rejectionOf(test.store.claimBatch({ queue: "q", workerId: "w", limit: 0, leaseMs: 1_000 }));
    expect(errorCodeOf(error)).to.equal(ErrorCode.Config);
  });

  it("refuses bad arguments to the operator calls with the field's name", async () => {
    const cases: [Promise<unknown>, RegExp][] = [
      [test.store.listJobs({ limit: 0 }), /`limit`/],
      [test.store.listJobs({ limit: 10, states: ["bogus" as never] }), /`states`/],
      [test.store.listJobs({ limit: 10, beforeId: "abc" }), /`beforeId`/],
      [test.store.deleteFinishedBefore({ states: ["queued" as never], olderThanMs: 0, limit: 10 }), /`states`/],
      [test.store.deleteFinishedBefore({ states: [], olderThanMs: 0, limit: 10 }), /`states`/],
      [test.store.deleteFinishedBefore({ states: ["dead"], olderThanMs: -1, limit: 10 }), /`olderThanMs`/],
      [test.store.retryDeadJobs({ queue: "q", limit: 0 }), /`limit`/],
      [test.store.cancelJobs({ queue: "q", states: ["running" as never], limit: 10 }), /`states`.*cancelled by id/],
      [test.store.cancelJobs({ queue: "q", states: [], limit: 10 }), /`states`/],
      [test.store.cancelJobs({ queue: "q", states: ["queued"], limit: 0 }), /`limit`/],
      [test.store.claimBatch({ queue: "q", workerId: "w", limit: 1, leaseMs: 1_000, maxTimeoutMs: -5 }), /`maxTimeoutMs`/],
      [test.store.fireDueSchedules({ limit: 0, graceMs: 86_400_000, plan: () => ({ fires: [], nextRunAt: new Date() }) }), /`limit`/],
    ];
    for (const [call, field] of cases) {
      const error = await rejectionOf(call);
      expect(error, String(field)).to.be.instanceOf(ConfigError);
      expect(error.message).to.match(field);
    }
  });

  it("claims with a fractional or huge maxTimeoutMs as whole milliseconds", async () => {
    await test.store.enqueue(newJob("deadline", {}, { timeoutMs: 2_000 }));
    const claim = (maxTimeoutMs: number) => test.store.claimBatch({ queue: "deadline", workerId: "w", limit: 1, leaseMs: 1_000, maxTimeoutMs });
    expect(await claim(1_999.9)).to.deep.equal([]);
    expect(await claim(1e12)).to.have.length(1);
  });

  it("extends leases and finalizes on the control pool, and claims on the main pool", async () => {
    const control = createDatabase({ connectionString: test.connectionString, maxConnections: 1 });
    const store = new PostgresJobStore({ db: test.db, schema: test.schema, controlDb: control.db });
    await store.enqueue(newJob("control-pool", {}));
    const [job] = await store.claimBatch({ queue: "control-pool", workerId: "w", limit: 1, leaseMs: 60_000 });
    expect((await store.extendLeases({ workerId: "w", leaseMs: 60_000, jobs: [job!] })).extended).to.deep.equal([job!.id]);
    await control.close();
    const error = await rejectionOf(store.completeJobs({ workerId: "w", jobs: [{ ...job!, resultJson: null, durationMs: 1 }] }));
    expect(error.message).to.match(/destroyed/);
    expect(await store.getJob({ id: job!.id })).to.include({ state: "running" });
  });

  it("rejects with InfrastructureError when the database cannot be reached", async () => {
    const unreachable = createDatabase({ connectionString: "postgres://postgres@127.0.0.1:1/postgres", connectionTimeoutMs: 2_000 });
    try {
      const error = await rejectionOf(new PostgresJobStore({ db: unreachable.db }).getJob({ id: "1" }));
      expect(errorCodeOf(error)).to.equal(ErrorCode.Infrastructure);
      expect(error.message).to.match(/^getJob failed: /);
      const pingError = await rejectionOf(new PostgresJobStore({ db: unreachable.db }).ping());
      expect(errorCodeOf(pingError)).to.equal(ErrorCode.Infrastructure);
    } finally {
      await unreachable.close();
    }
  });

  it("rejects with STINT_SCHEMA_MISSING when the schema was never migrated", async () => {
    const error = await rejectionOf(new PostgresJobStore({ db: test.db, schema: "stint_never_migrated" }).getJob({ id: "1" }));
    expect(errorCodeOf(error)).to.equal(ErrorCode.SchemaMissing);
    expect((error as { sqlState?: string }).sqlState).to.equal("42P01");
  });
});
