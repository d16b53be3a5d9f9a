import { ConfigError } from "@stint/core";
import type { Kysely, Transaction } from "kysely";
import { describeValue, isKysely } from "../is-kysely";
import { DrizzleStatements, drizzleKindsOf, isDrizzleTransaction, type DrizzleTransactionLike } from "./drizzle-statements";
import { KyselyStatements } from "./kysely-statements";
import { KnexStatements, isKnexLike, isKnexTransaction, knexDialectOf, type KnexTransactionLike } from "./knex-statements";
import { PgClientStatements, isPgClient, isPgPool, pgClientInTransaction, type PgClientLike } from "./pg-client-statements";
import type { Statements } from "./statement";

/**
 * A caller's transaction that `enqueue` and `enqueueMany` write in, so
 * that the jobs exist if and only if it commits:
 *
 * - Kysely: a `Transaction<DB>` (or a `Kysely<DB>`, which writes at once);
 * - pg: a `Client` or a `PoolClient` (from `pool.connect()`) after `BEGIN`;
 * - Drizzle: the `tx` of `db.transaction(async (tx) => …)` on
 *   `drizzle-orm/node-postgres`;
 * - knex: the `trx` of `knex.transaction(async (trx) => …)` on the `pg` client.
 *
 * Each is recognised by its shape, so duplicated copies of these libraries
 * work, and stint depends on none of pg's neighbours at run time.
 *
 * @example
 * ```ts
 * await db.transaction(async (tx) => {
 *   await tx.insert(orders).values(order);
 *   await client.enqueue(SendReceipt, { orderId: order.id }, { transaction: tx });
 * });
 * ```
 */
export type PostgresTransaction = Kysely<any> | Transaction<any> | PgClientLike | DrizzleTransactionLike | KnexTransactionLike;

/** What the refusal of anything else lists, for every message below. */
const SUPPORTED =
  "a Kysely Transaction (or Kysely instance), a pg Client or PoolClient inside BEGIN, " +
  "a Drizzle transaction (db.transaction on drizzle-orm/node-postgres) or a knex transaction (knex.transaction on the pg client)";

/**
 * Where the statements of an enqueue in the caller's `transaction` run:
 * one of the {@link PostgresTransaction} kinds, wrapped in its adapter.
 * Anything else is refused with a `ConfigError` on `option` that names
 * the kinds accepted; so are the near misses that would write outside
 * any transaction (a `pg.Pool`, a pg client not inside `BEGIN`, a knex or
 * Drizzle database instead of its transaction).
 *
 * @example
 * ```ts
 * const statements = transactionStatements(options.transaction, "transaction");
 * await enqueue(statements, schema, job);
 * ```
 */
export function transactionStatements(transaction: unknown, option: string): Statements {
  if (isKysely(transaction)) return new KyselyStatements(transaction);
  if (isKnexLike(transaction)) return new KnexStatements(knexTransaction(transaction, option));
  if (isDrizzleTransaction(transaction)) return new DrizzleStatements(transaction);
  const drizzleKinds = drizzleKindsOf(transaction);
  if (drizzleKinds.length > 0) throw new ConfigError(option, drizzleMismatch(drizzleKinds));
  if (isPgPool(transaction)) {
    throw new ConfigError(
      option,
      "got a pg Pool, which runs each query on whichever connection is free, so nothing it runs is in your transaction: " +
        "check a client out (const connection = await pool.connect()), run BEGIN on it, and pass that client",
    );
  }
  if (isPgClient(transaction)) {
    if (pgClientInTransaction(transaction) === false) {
      throw new ConfigError(
        option,
        'got a pg client that is not inside a transaction: await its query("BEGIN") before enqueueing, so the job commits with your writes',
      );
    }
    return new PgClientStatements(transaction);
  }
  if (isPrismaClient(transaction)) {
    throw new ConfigError(
      option,
      `got a Prisma client, which is not supported here; must be ${SUPPORTED}. From a Prisma transaction, call the SQL function stint.enqueue(queue, payload) with tx.$queryRaw`,
    );
  }
  throw new ConfigError(option, `must be ${SUPPORTED}; got ${describeValue(transaction)}`);
}

function knexTransaction(knex: unknown, option: string): KnexTransactionLike {
  if (!isKnexTransaction(knex)) {
    throw new ConfigError(option, "got a knex instance, not a transaction: pass the trx of knex.transaction(async (trx) => …)");
  }
  const dialect = knexDialectOf(knex);
  if (dialect !== undefined && dialect !== "postgresql") {
    throw new ConfigError(option, `got a knex transaction of the ${dialect} dialect: stint's jobs are in PostgreSQL (knex's pg client)`);
  }
  return knex;
}

function drizzleMismatch(kinds: readonly string[]): string {
  if (kinds.includes("PgTransaction")) {
    return `got a Drizzle ${kinds[0]!}: only the node-postgres driver's transactions are supported (drizzle-orm/node-postgres)`;
  }
  if (kinds.includes("PgDatabase")) return "got a Drizzle database, not a transaction: pass the tx of db.transaction(async (tx) => …)";
  return `must be ${SUPPORTED}; got a Drizzle ${kinds[0]!}`;
}

/** A Prisma client or interactive transaction: what neither of the above is, with Prisma's raw-query calls. */
function isPrismaClient(value: unknown): boolean {
  return typeof value === "object" && value !== null && typeof (value as { $queryRawUnsafe?: unknown }).$queryRawUnsafe === "function";
}
