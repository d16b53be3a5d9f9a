import { PayloadSchemaError, type JobClient, type JobDefinition, type PayloadIssue } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { AiSummary } from "../jobs/ai-summary";
import { NightlyCleanup } from "../jobs/nightly-cleanup";
import { SendInvoiceEmail } from "../jobs/send-invoice-email";
import { WeeklyReport } from "../jobs/weekly-report";

/** A payload that fails its job kind's schema, as a producer unaware of the types might send it. */
export interface MalformedPayload {
  readonly kind: JobDefinition<unknown>;
  readonly payload: unknown;
}

/**
 * The demo's malformed payloads, one or two per kind: a string for a
 * number, a misspelt field, a month 13, a target off the allow-list, a
 * missing document.
 *
 * @example
 * ```ts
 * MALFORMED_PAYLOADS.map(({ kind }) => kind.name); // ["send-invoice-email", "send-invoice-email", "weekly-report", …]
 * ```
 */
export const MALFORMED_PAYLOADS: readonly MalformedPayload[] = Object.freeze([
  { kind: untyped(SendInvoiceEmail), payload: { invoiceId: "abc" } },
  { kind: untyped(SendInvoiceEmail), payload: { invoice_id: 17 } },
  { kind: untyped(WeeklyReport), payload: { weekStart: "2025-13-01", recipient: "finance@example.com" } },
  { kind: untyped(NightlyCleanup), payload: { target: "users", olderThanDays: 1 } },
  { kind: untyped(AiSummary), payload: { documentId: null } },
]);

/** A payload `enqueue` refused: its queue, the error's message and the fields its schema named. */
export interface RefusedPayload {
  readonly queue: string;
  readonly message: string;
  readonly issues: readonly PayloadIssue[];
}

/**
 * Tries to enqueue each payload with `client.enqueue`, as a current
 * producer would; the job kind's schema refuses each one before anything
 * is inserted. Resolves with the refusals in order; a payload that was
 * accepted after all is a bug of the schema, and rejects.
 *
 * @example
 * ```ts
 * const refused = await enqueueRefused(client, MALFORMED_PAYLOADS);
 * refused[0].message; // 'payload of queue "send-invoice-email" failed its schema: payload.invoiceId: Invalid input: …'
 * ```
 */
export async function enqueueRefused(client: JobClient, payloads: readonly MalformedPayload[]): Promise<readonly RefusedPayload[]> {
  const refused: RefusedPayload[] = [];
  for (const { kind, payload } of payloads) {
    try {
      await client.enqueue(kind, payload);
    } catch (thrown) {
      if (!(thrown instanceof PayloadSchemaError)) throw thrown;
      refused.push({ queue: kind.name, message: thrown.message, issues: thrown.issues });
      continue;
    }
    throw new Error(`the schema of ${kind.name} accepted the malformed payload ${JSON.stringify(payload)}`);
  }
  return refused;
}

/**
 * Writes jobs the way a producer deployed before the job kinds had
 * schemas (or one in another language) does: a plain `INSERT` into
 * stint's `jobs` table, which no schema check sees. Only the demo writes
 * jobs like this, to show the worker's check on claim sending them to
 * `dead`; an application enqueues through `JobClient`. Resolves with the
 * new jobs' ids, in order.
 *
 * @example
 * ```ts
 * const ids = await insertWithSql(db, "stint_demo", MALFORMED_PAYLOADS);
 * ```
 */
export async function insertWithSql(db: Kysely<any>, schema: string, payloads: readonly MalformedPayload[]): Promise<readonly string[]> {
  const ids: string[] = [];
  for (const { kind, payload } of payloads) {
    const { rows } = await sql<{ id: string }>`INSERT INTO ${sql.id(schema, "jobs")} (queue, payload)
 VALUES (${kind.name}, ${JSON.stringify(payload)}::jsonb) RETURNING id::text AS id`.execute(db);
    ids.push(rows[0]!.id);
  }
  return ids;
}

/** The same job kind without its payload type: what a producer unaware of the types can send. */
function untyped<T>(kind: JobDefinition<T>): JobDefinition<unknown> {
  return kind as unknown as JobDefinition<unknown>;
}
