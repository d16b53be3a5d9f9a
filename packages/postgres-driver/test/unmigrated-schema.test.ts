import { expect } from "chai";
import { sql } from "kysely";
import {
  createSilentLogger,
  defineJob,
  DatabaseError,
  ErrorCode,
  errorCodeOf,
  ExitCode,
  JobClient,
  runWorkers,
  SchemaMissingError,
  type JobStore,
} from "@stint/core";
import { interpretError, PostgresJobStore } from "../src";
import { createTestSchema, type TestSchema } from "../src/testing";
import { ScriptedWorker } from "./worker-lifecycle/scripted-worker";

const Invoice = defineJob<{ readonly invoiceId: number }>("send-invoice");

/** What `call` rejected with; fails the test when it resolved. */
async function rejection(call: () => Promise<unknown>): Promise<Error> {
  const outcome = await call().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(outcome instanceof Error)) throw new Error(`expected a rejection, got ${String(outcome)}`);
  return outcome;
}

describe("a schema that migrate never created", () => {
  let test: TestSchema;
  let store: JobStore;
  const schema = "stint_unmigrated_never";

  before(async () => {
    test = await createTestSchema({ maxConnections: 4 });
    await sql`DROP SCHEMA IF EXISTS ${sql.id(schema)} CASCADE`.execute(test.db);
    store = new PostgresJobStore({ db: test.db, schema });
  });
  after(() => test.drop());

  it("refuses an enqueue from code with STINT_SCHEMA_MISSING and the command that creates it", async () => {
    const error = await rejection(() => new JobClient(store).enqueue(Invoice, { invoiceId: 812 }));
    expect(error).to.be.instanceOf(SchemaMissingError);
    expect(errorCodeOf(error)).to.equal(ErrorCode.SchemaMissing);
    expect(error).to.include({ schema, sqlState: "42P01" });
    expect(error.message).to.equal(
      `enqueue failed: relation "${schema}.jobs" does not exist — schema "${schema}" is not migrated: run \`stint migrate --schema ${schema}\``,
    );
  });

  it("refuses every kind of store operation the same way: worker, operator and maintenance calls", async () => {
    const calls: Record<string, () => Promise<unknown>> = {
      claimBatch: () => store.claimBatch({ queue: "send-invoice", workerId: "w1", limit: 5, leaseMs: 30_000 }),
      getJob: () => store.getJob({ id: "1" }),
      listJobs: () => store.listJobs({ limit: 10 }),
      countByQueue: () => store.countByQueue({}),
      rescueExpiredLeases: () => store.rescueExpiredLeases({ limit: 100 }),
      deleteFinishedBefore: () => store.deleteFinishedBefore({ states: ["succeeded"], olderThanMs: 0, limit: 100 }),
    };
    for (const [operation, call] of Object.entries(calls)) {
      const error = await rejection(call);
      expect(errorCodeOf(error), operation).to.equal(ErrorCode.SchemaMissing);
      expect(error.message, operation).to.match(
        new RegExp(`^${operation} failed: .* — schema "${schema}" is not migrated: run \`stint migrate --schema ${schema}\`$`),
      );
    }
  });

  it("stops a run of workers with that message and exit code 78, once or in a loop", async () => {
    for (const mode of ["once", "loop"] as const) {
      const worker = new ScriptedWorker(store, { job: Invoice as never, process: () => Promise.resolve() });
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(), 10_000);
      const report = await runWorkers({ workers: [worker], mode, store, log: createSilentLogger(), signal: stop.signal }).finally(() => clearTimeout(timer));
      expect(report, mode).to.include({ exitCode: ExitCode.Config, stoppedBecause: "config" });
      expect(report.workers[0], mode).to.include({ stoppedBecause: "config", claimed: 0 });
      expect(report.workers[0]?.error, mode).to.equal(
        `claimBatch failed: relation "${schema}.jobs" does not exist — schema "${schema}" is not migrated: run \`stint migrate --schema ${schema}\``,
      );
      expect(stop.signal.aborted, `${mode}: the run stopped by itself`).to.equal(false);
    }
  });

  it("keeps a missing table of another schema a DatabaseError, and says nothing of migrations without a schema to compare", async () => {
    const thrown = await rejection(() => sql`SELECT * FROM ${sql.id("stint_unmigrated_app", "invoices")}`.execute(test.db));
    const other = interpretError(thrown, "completeInTransaction", { schema: test.schema });
    expect(other).to.be.instanceOf(DatabaseError);
    expect(other.message).to.equal('completeInTransaction failed: relation "stint_unmigrated_app.invoices" does not exist');
    expect(interpretError(thrown, "enqueue")).to.be.instanceOf(DatabaseError);
  });

  it("leaves out --schema for the default schema", async () => {
    const thrown = await rejection(() => sql`SELECT * FROM ${sql.id("stint", "no_such_table_here")}`.execute(test.db));
    expect(interpretError(thrown, "listJobs", { schema: "stint" }).message).to.equal(
      'listJobs failed: relation "stint.no_such_table_here" does not exist — schema "stint" is not migrated: run `stint migrate`',
    );
  });
});

describe("a schema behind this stint's migrations", () => {
  let test: TestSchema;

  before(async () => {
    test = await createTestSchema({ maxConnections: 4 });
  });
  after(() => test.drop());

  it("says to migrate when a later migration's table or function is missing", async () => {
    await sql`DROP TABLE ${sql.id(test.schema, "dead_hooks")}`.execute(test.db);
    const table = await rejection(() => test.store.claimDeadHooks({ queue: "send-invoice", workerId: "w1", limit: 5, leaseMs: 30_000 }));
    expect(table).to.include({ code: ErrorCode.SchemaMissing, schema: test.schema, sqlState: "42P01" });
    expect(table.message).to.include(`— schema "${test.schema}" is not migrated: run \`stint migrate --schema ${test.schema}\``);

    await sql`DROP FUNCTION ${sql.id(test.schema, "claim_room")}`.execute(test.db);
    await test.store.setQueueControls("send-invoice", { maxRunning: 2 });
    const fn = await rejection(() => test.store.claimBatch({ queue: "send-invoice", workerId: "w1", limit: 5, leaseMs: 30_000 }));
    expect(fn).to.include({ code: ErrorCode.SchemaMissing, sqlState: "42883" });
  });
});
