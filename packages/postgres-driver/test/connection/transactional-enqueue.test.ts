import { ConfigError, ErrorCode, JobClient, errorCodeOf, type EnqueueResult } from "@stint/core";
import { rejectionOf } from "@stint/core/testing";
import { expect } from "chai";
import { drizzle, type NodePgTransaction } from "drizzle-orm/node-postgres";
import type { Transaction } from "kysely";
import { knex, type Knex } from "knex";
import pg from "pg";
import { PostgresJobStore, type PostgresTransaction } from "../../src";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { ScriptedWorker, TaskJob } from "../worker-lifecycle/scripted-worker";
import { TRANSACTION_KINDS, type OpenTransactionKind } from "./transaction-kinds";

const JOB_ID = /^[1-9][0-9]*$/;

for (const kind of TRANSACTION_KINDS) {
  describe(`enqueue in a caller's ${kind.name}`, () => {
    let test: TestSchema;
    let transactions: OpenTransactionKind;
    let client: JobClient;

    beforeEach(async () => {
      test = await createTestSchema();
      transactions = await kind.open(test.connectionString);
      client = new JobClient(test.store);
    });
    afterEach(async () => {
      await transactions.close();
      await test.drop();
    });

    /** Runs a worker on the task queue until no job is due; returns the payloads it handled. */
    async function drainWorker(): Promise<number[]> {
      const handled: number[] = [];
      const summary = await new ScriptedWorker(test.store, { process: async ({ n }) => void handled.push(n) }).start();
      expect(summary.stoppedBecause).to.equal("drained");
      return handled.sort((a, b) => a - b);
    }

    async function jobCount(): Promise<number> {
      const [counts] = await test.store.countByQueue({ queues: [TaskJob.name] });
      return Object.values(counts?.counts ?? {}).reduce((sum, n) => sum + n, 0);
    }

    it("writes jobs that no read, claim or worker sees before the commit, and a worker runs after it", async () => {
      const enqueued = await transactions.withTransaction(async (transaction) => {
        const one = await client.enqueue(TaskJob, { n: 1 }, { transaction });
        const many = await client.enqueueMany(TaskJob, [{ payload: { n: 2 } }, { payload: { n: 3 } }], { transaction });
        expect(await test.store.getJob({ id: one.id })).to.equal(undefined);
        expect(await test.store.claimBatch({ queue: TaskJob.name, workerId: "peeker", limit: 10, leaseMs: 60_000 })).to.deep.equal([]);
        expect(await drainWorker()).to.deep.equal([]);
        return [one, ...many];
      });

      for (const result of enqueued) {
        expect(result.id).to.be.a("string").and.match(JOB_ID);
        expect(result.duplicate).to.equal(false);
        expect((await test.store.getJob({ id: result.id }))?.state).to.equal("queued");
      }
      expect(new Set(enqueued.map((result) => result.id)).size).to.equal(3);
      expect(await drainWorker()).to.deep.equal([1, 2, 3]);
    });

    it("leaves no job behind, and no dedupe key held, when the transaction rolls back", async () => {
      const failure = new Error("the caller's own write failed");
      const ids: string[] = [];
      const error = await rejectionOf(
        transactions.withTransaction(async (transaction) => {
          ids.push((await client.enqueue(TaskJob, { n: 1 }, { transaction, dedupeKey: "order-7" })).id);
          const many = await client.enqueueMany(TaskJob, [{ payload: { n: 2 } }, { payload: { n: 3 }, options: { dedupeKey: "order-8" } }], { transaction });
          ids.push(...many.map((result) => result.id));
          throw failure;
        }),
      );

      expect(error).to.equal(failure);
      expect(ids).to.have.length(3);
      for (const id of ids) expect(await test.store.getJob({ id })).to.equal(undefined);
      expect(await jobCount()).to.equal(0);
      expect((await client.enqueue(TaskJob, { n: 4 }, { dedupeKey: "order-7" })).duplicate).to.equal(false);
    });

    it("dedupes within the transaction as outside it: keep, replace and a batch", async () => {
      const results = await transactions.withTransaction(async (transaction) => {
        const first = await client.enqueue(TaskJob, { n: 1 }, { transaction, dedupeKey: "order-7" });
        const kept = await client.enqueue(TaskJob, { n: 2 }, { transaction, dedupeKey: "order-7" });
        const replaced = await client.enqueue(TaskJob, { n: 3 }, { transaction, dedupeKey: "order-7", dedupe: "replace" });
        const batch = await client.enqueueMany(
          TaskJob,
          [
            { payload: { n: 4 }, options: { dedupeKey: "order-7" } },
            { payload: { n: 5 }, options: { dedupeKey: "order-8" } },
            { payload: { n: 6 }, options: { dedupeKey: "order-8" } },
          ],
          { transaction },
        );
        return { first, kept, replaced, batch };
      });

      const { first, kept, replaced, batch } = results;
      expect(plain(kept)).to.deep.equal({ id: first.id, duplicate: true });
      expect(plain(replaced)).to.deep.equal({ id: first.id, duplicate: true, replaced: true });
      expect(batch.map(plain)).to.deep.equal([
        { id: first.id, duplicate: true },
        { id: batch[1]?.id, duplicate: false },
        { id: batch[1]?.id, duplicate: true },
      ]);
      expect(batch[1]?.id).to.match(JOB_ID).and.not.equal(first.id);
      expect(await jobCount()).to.equal(2);
      expect(await drainWorker()).to.deep.equal([3, 5]);
    });

    it("passes on a failed statement as the Kysely path does: the store's error, PostgreSQL's message, no payload", async () => {
      const unmigrated = new JobClient(new PostgresJobStore({ db: test.db, schema: `${test.schema}_missing` }));
      const error = await rejectionOf(
        transactions.withTransaction((transaction) => unmigrated.enqueue(TaskJob, { n: 31_337 }, { transaction, dedupeKey: "order-7" })),
      );

      expect(errorCodeOf(error)).to.equal(ErrorCode.SchemaMissing);
      expect(error.message).to.match(/^enqueue failed: relation "[a-z0-9_]+_missing\.jobs" does not exist — schema "[a-z0-9_]+_missing" is not migrated/);
      expect(error.message).not.to.contain("31337").and.not.to.contain("order-7").and.not.to.contain("INSERT");
      expect(await jobCount()).to.equal(0);
    });
  });
}

/** The result's own fields, without the type-only ones `enqueue` declares. */
function plain(result: EnqueueResult | undefined): object {
  return { ...result };
}

describe("enqueue in a caller's transaction: what is refused", () => {
  let test: TestSchema;
  let client: JobClient;
  let pool: pg.Pool;

  before(async () => {
    test = await createTestSchema();
    client = new JobClient(test.store);
    pool = new pg.Pool({ connectionString: test.connectionString, max: 2 });
  });
  after(async () => {
    await pool.end();
    await test.drop();
  });

  async function refusal(transaction: unknown): Promise<Error> {
    const error = await rejectionOf(client.enqueue(TaskJob, { n: 1 }, { transaction }));
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as ConfigError).option).to.equal("transaction");
    const [counts] = await test.store.countByQueue({ queues: [TaskJob.name] });
    expect(Object.values(counts?.counts ?? {}).reduce((sum, n) => sum + n, 0)).to.equal(0, "a refused enqueue wrote a job");
    return error;
  }

  it("refuses an object of no supported kind with a message that names every kind", async () => {
    for (const unsupported of [{}, { query: () => undefined }, "BEGIN", 42, new Map()]) {
      const { message } = await refusal(unsupported);
      for (const named of ["Kysely", "pg Client or PoolClient inside BEGIN", "Drizzle", "knex"]) expect(message).to.contain(named);
    }
    expect((await refusal(new Map())).message).to.match(/got Map$/);
  });

  it("refuses a pg Pool: its queries run on any connection, outside the caller's transaction", async () => {
    expect((await refusal(pool)).message)
      .to.contain("pg Pool")
      .and.contain("pool.connect()");
    expect(await rejectionOf(client.enqueueMany(TaskJob, [{ payload: { n: 1 } }], { transaction: pool }))).to.be.instanceOf(ConfigError);
  });

  it("refuses a pg client that is not inside BEGIN, and takes it once it is", async () => {
    const connection = await pool.connect();
    try {
      expect((await refusal(connection)).message).to.contain("not inside a transaction");
      await connection.query("BEGIN");
      const { id } = await client.enqueue(TaskJob, { n: 1 }, { transaction: connection });
      await connection.query("ROLLBACK");
      expect(await test.store.getJob({ id })).to.equal(undefined);
    } finally {
      connection.release();
    }
  });

  it("refuses a knex instance and a Drizzle database, each with the call that gives its transaction", async () => {
    const knexDb = knex({ client: "pg", connection: test.connectionString, pool: { min: 0, max: 1 } });
    try {
      expect((await refusal(knexDb)).message)
        .to.contain("knex instance, not a transaction")
        .and.contain("knex.transaction");
    } finally {
      await knexDb.destroy();
    }
    expect((await refusal(drizzle({ client: pool }))).message)
      .to.contain("Drizzle database, not a transaction")
      .and.contain("db.transaction");
  });

  it("refuses a knex transaction of another dialect before running anything", async () => {
    const mysqlShaped = Object.assign(() => undefined, {
      isTransaction: true as const,
      raw: () => Promise.reject(new Error("a statement was sent")),
      transaction: () => undefined,
      client: { dialect: "mysql" },
    });
    expect((await refusal(mysqlShaped)).message).to.contain("mysql dialect");
  });

  it("refuses a Prisma client, pointing to the SQL function", async () => {
    const prismaShaped = { $queryRawUnsafe: () => Promise.resolve([]), $executeRawUnsafe: () => Promise.resolve(0) };
    expect((await refusal(prismaShaped)).message)
      .to.contain("Prisma")
      .and.contain("stint.enqueue(queue, payload)");
  });
});

describe("PostgresTransaction", () => {
  it("is the type of each library's own transaction, so a typed call needs no cast", () => {
    // Compiles only while each library's type fits; the calls are never made.
    const kinds = (kysely: Transaction<any>, pool: pg.PoolClient, client: pg.Client, drizzleTx: NodePgTransaction<any, any>, knexTrx: Knex.Transaction) => {
      const accepted: PostgresTransaction[] = [kysely, pool, client, drizzleTx, knexTrx];
      return accepted;
    };
    expect(kinds).to.be.a("function");
  });
});
