import { JobClient } from "@stint/core";
import { expect } from "chai";
import { drizzle } from "drizzle-orm/node-postgres";
import { Kysely, PostgresDialect, sql } from "kysely";
import { knex } from "knex";
import pg from "pg";
import { createTestSchema, type TestSchema } from "../../src/testing";
import type { DB } from "./outbox/db";
import { SendReceipt } from "./outbox/jobs";
import * as withDrizzle from "./outbox/place-order-drizzle";
import * as withKnex from "./outbox/place-order-knex";
import * as withKysely from "./outbox/place-order-kysely";
import * as withPg from "./outbox/place-order-pg";

type Order = { id: number; email: string };

/** Where the examples connect: the test schema's database, with the test schema first on the search path. */
interface Connection {
  readonly connectionString: string;
  readonly options: string;
}

/** One of the documented `placeOrder` functions (docs/writing-jobs.md), bound to its library's database object. */
interface OutboxExample {
  readonly name: string;
  /** Opens the library's database object on `connection`; returns `placeOrder` bound to it, and how to close it. */
  open(connection: Connection, client: JobClient): { placeOrder: (order: Order) => Promise<void>; close: () => Promise<void> };
}

const EXAMPLES: readonly OutboxExample[] = [
  {
    name: "Kysely",
    open: (connection, client) => {
      const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ ...connection, max: 2 }) }) });
      return { placeOrder: (order) => withKysely.placeOrder(db, client, order), close: () => db.destroy() };
    },
  },
  {
    name: "pg",
    open: (connection, client) => {
      const pool = new pg.Pool({ ...connection, max: 2 });
      return { placeOrder: (order) => withPg.placeOrder(pool, client, order), close: () => pool.end() };
    },
  },
  {
    name: "Drizzle",
    open: (connection, client) => {
      const pool = new pg.Pool({ ...connection, max: 2 });
      const db = drizzle({ client: pool });
      return { placeOrder: (order) => withDrizzle.placeOrder(db, client, order), close: () => pool.end() };
    },
  },
  {
    name: "knex",
    open: (connection, client) => {
      const db = knex({ client: "pg", connection, pool: { min: 0, max: 2 } });
      return { placeOrder: (order) => withKnex.placeOrder(db, client, order), close: () => db.destroy() };
    },
  },
];

for (const example of EXAMPLES) {
  describe(`the documented transactional outbox with ${example.name}`, () => {
    let test: TestSchema;
    let opened: ReturnType<OutboxExample["open"]>;

    beforeEach(async () => {
      test = await createTestSchema();
      // Each order's e-mail is unique at commit: a second order with the same one fails at COMMIT, after its enqueue.
      await sql`CREATE TABLE ${sql.id(test.schema, "orders")} (id integer PRIMARY KEY, email text NOT NULL UNIQUE DEFERRABLE INITIALLY DEFERRED)`.execute(
        test.db,
      );
      const connection = { connectionString: test.connectionString, options: `-c search_path=${test.schema}` };
      opened = example.open(connection, new JobClient(test.store));
    });
    afterEach(async () => {
      await opened.close();
      await test.drop();
    });

    async function committed(): Promise<{ orders: number[]; receipts: unknown[] }> {
      const orders = await sql<{ id: number }>`SELECT id FROM ${sql.id(test.schema, "orders")} ORDER BY id`.execute(test.db);
      const jobs = await test.store.listJobs({ queue: SendReceipt.name, limit: 10 });
      return { orders: orders.rows.map((row) => row.id), receipts: jobs.map((job) => job.payload).reverse() };
    }

    it("commits the order and its job together, and neither when the commit fails", async () => {
      await opened.placeOrder({ id: 1, email: "ada@example.com" });
      expect(await committed()).to.deep.equal({ orders: [1], receipts: [{ orderId: 1 }] });

      const error = await opened.placeOrder({ id: 2, email: "ada@example.com" }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      // Drizzle passes pg's error on as its own error's cause.
      const failure = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
      expect(failure?.code ?? failure?.cause?.code).to.equal("23505");
      expect(await committed()).to.deep.equal({ orders: [1], receipts: [{ orderId: 1 }] });
    });
  });
}
