import { drizzle } from "drizzle-orm/node-postgres";
import { knex } from "knex";
import pg from "pg";
import { Kysely, PostgresDialect } from "kysely";

/** A caller's transaction of one library, opened and finished as that library's users do. */
export interface OpenTransactionKind {
  /** Runs `work` in a new transaction: committed when `work` resolves, rolled back when it rejects (the rejection is passed on). */
  withTransaction<T>(work: (transaction: unknown) => Promise<T>): Promise<T>;
  /** Closes the pools and connections it opened. */
  close(): Promise<void>;
}

/** One kind of transaction `enqueue` accepts, for table-driven tests. */
export interface TransactionKind {
  readonly name: string;
  /** Opens the library's own pool or connection on `connectionString` (the application's, not stint's). */
  open(connectionString: string): Promise<OpenTransactionKind>;
}

/** The transaction kinds `enqueue` accepts: each test of the table runs once per kind. */
export const TRANSACTION_KINDS: readonly TransactionKind[] = [
  {
    name: "Kysely Transaction",
    open: async (connectionString) => {
      const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString, max: 2 }) }) });
      return { withTransaction: (work) => db.transaction().execute((trx) => work(trx)), close: () => db.destroy() };
    },
  },
  {
    name: "pg PoolClient",
    open: async (connectionString) => {
      const pool = new pg.Pool({ connectionString, max: 2 });
      return {
        withTransaction: async (work) => {
          const connection = await pool.connect();
          try {
            return await inBeginCommit(connection, work);
          } finally {
            connection.release();
          }
        },
        close: () => pool.end(),
      };
    },
  },
  {
    name: "pg Client (bigint parsed as BigInt)",
    open: async (connectionString) => {
      // An application may parse bigint columns to BigInt: ids must still come back as strings.
      const types = new pg.TypeOverrides();
      types.setTypeParser(pg.types.builtins.INT8, BigInt);
      const client = new pg.Client({ connectionString, types });
      await client.connect();
      // One connection holds one transaction at a time: transactions asked for together take turns.
      let turn: Promise<unknown> = Promise.resolve();
      return {
        withTransaction: (work) => {
          const transaction = turn.then(() => inBeginCommit(client, work));
          turn = transaction.catch(() => undefined);
          return transaction;
        },
        close: () => client.end(),
      };
    },
  },
  {
    name: "Drizzle transaction (node-postgres)",
    open: async (connectionString) => {
      const pool = new pg.Pool({ connectionString, max: 2 });
      const db = drizzle({ client: pool });
      return { withTransaction: (work) => db.transaction((tx) => work(tx)), close: () => pool.end() };
    },
  },
  {
    name: "knex transaction (pg)",
    open: async (connectionString) => {
      const db = knex({ client: "pg", connection: connectionString, pool: { min: 0, max: 2 } });
      return { withTransaction: (work) => db.transaction((trx) => work(trx)), close: () => db.destroy() };
    },
  },
];

async function inBeginCommit<T>(connection: pg.ClientBase, work: (transaction: unknown) => Promise<T>): Promise<T> {
  await connection.query("BEGIN");
  try {
    const result = await work(connection);
    await connection.query("COMMIT");
    return result;
  } catch (thrown) {
    await connection.query("ROLLBACK");
    throw thrown;
  }
}
