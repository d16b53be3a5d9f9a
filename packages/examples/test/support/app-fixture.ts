import { createSilentLogger, type JobDefinition, type JobRecord, type JobStore, type Logger } from "@stint/core";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { migrateAppSchema } from "../../src/app/app-schema";
import { insertWithSql } from "../../src/demo/malformed-payloads";
import { appDatabase, type AppDb } from "../../src/app/app-tables";

/** A fresh schema with stint's and the app's tables, for one test. */
export interface AppFixture {
  readonly test: TestSchema;
  readonly db: AppDb;
  readonly store: TestSchema["store"];
  readonly log: Logger;
  drop(): Promise<void>;
}

/** Short retry delays so that retries happen within a test. */
export const FAST_BACKOFF = Object.freeze({ baseMs: 10, maxMs: 50 });

/** Creates a fresh schema (stint + app tables) named `stint_test_<random>`. */
export async function createAppFixture(): Promise<AppFixture> {
  const test = await createTestSchema();
  try {
    await migrateAppSchema(test.db, { schema: test.schema });
  } catch (thrown) {
    await test.drop();
    throw thrown;
  }
  return { test, db: appDatabase(test.db, test.schema), store: test.store, log: createSilentLogger(), drop: () => test.drop() };
}

/** Inserts invoices with the given ids, issued at `issuedAt` (default now). */
export async function insertInvoices(db: AppDb, ids: readonly number[], issuedAt: Date = new Date(), amountCents = 10_000): Promise<void> {
  await db
    .insertInto("invoices")
    .values(ids.map((id) => ({ id, customer_email: `customer${id}@example.com`, amount_cents: amountCents, currency: "EUR", issued_at: issuedAt })))
    .execute();
}

/** The recorded e-mails, optionally only those about `reference`. */
export async function sentEmails(db: AppDb, reference?: string): Promise<readonly { to_address: string; subject: string; reference: string | null }[]> {
  let query = db.selectFrom("sent_emails").select(["to_address", "subject", "reference"]).orderBy("id");
  if (reference !== undefined) query = query.where("reference", "=", reference);
  return query.execute();
}

/** A job's row; fails the test when it is missing. */
export async function jobRow(store: JobStore, id: string): Promise<JobRecord> {
  const record = await store.getJob({ id });
  if (record === undefined) throw new Error(`job ${id} is missing`);
  return record;
}

/** The same job kind without its payload type, to enqueue payloads the types would refuse. */
export function untyped<T, R, I>(kind: JobDefinition<T, R, I>): JobDefinition<unknown> {
  return kind as unknown as JobDefinition<unknown>;
}

/** Writes a job with SQL, past enqueue's schema check, as a producer from before the schemas would; resolves with its id. */
export async function writtenWithSql<T, R, I>(app: AppFixture, kind: JobDefinition<T, R, I>, payload: unknown): Promise<string> {
  const [id] = await insertWithSql(app.test.db, app.test.schema, [{ kind: untyped(kind), payload }]);
  return id!;
}
