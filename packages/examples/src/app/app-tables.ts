import { assertSqlIdentifier } from "@stint/core/driver";
import type { ColumnType, Generated, Kysely } from "kysely";

/** Invoices issued to customers (the data the invoice and report workers read). */
export interface InvoicesTable {
  readonly id: number;
  readonly customer_email: string;
  readonly amount_cents: number;
  /** ISO 4217 code such as `EUR`. */
  readonly currency: string;
  readonly issued_at: ColumnType<Date, Date | string, Date | string>;
}

/** One row per invoice that was e-mailed, written in the transaction of the send's `ctx.once` effect. */
export interface InvoiceEmailsTable {
  readonly invoice_id: number;
  /** The job that sent it. */
  readonly job_id: string;
  readonly recipient: string;
  readonly message_id: string | null;
  readonly sent_at: Generated<Date>;
}

/** Invoice e-mails given up on: one row per death of a `send-invoice-email` job, written by its worker's `onDead`. */
export interface UndeliveredInvoicesTable {
  readonly job_id: string;
  /** The attempt after which the job died. */
  readonly attempt: number;
  /** The job's payload as stored (it may not have been a valid one). */
  readonly payload: unknown;
  readonly error_code: string | null;
  readonly reason: string;
  readonly recorded_at: Generated<Date>;
}

/** What the recording mailer "sent": one row per delivered e-mail. */
export interface SentEmailsTable {
  readonly id: Generated<string>;
  readonly to_address: string;
  readonly subject: string;
  readonly body: string;
  /** What the mail is about, e.g. `invoice:812:email` (a provider would get it as an idempotency key). */
  readonly reference: string | null;
  readonly sent_at: Generated<Date>;
}

/** Stored reports; one per kind and period. */
export interface ReportsTable {
  readonly id: Generated<number>;
  readonly kind: string;
  /** First day of the period (a `date`; read it as text with `to_char`). */
  readonly period_start: ColumnType<Date, string, string>;
  /** The report as JSON (written as text, read back parsed). */
  readonly body: ColumnType<unknown, string, string>;
  readonly created_at: Generated<Date>;
  /** Set in the same transaction as the e-mail send: the report e-mail's claim. */
  readonly emailed_at: Date | null;
  readonly emailed_to: string | null;
}

/** An append-only audit trail; old events are deleted by the nightly cleanup. */
export interface AuditEventsTable {
  readonly id: Generated<string>;
  readonly action: string;
  readonly occurred_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** Web sessions; expired ones are deleted by the nightly cleanup. */
export interface SessionsTable {
  readonly id: Generated<string>;
  readonly user_email: string;
  readonly expires_at: ColumnType<Date, Date | string, Date | string>;
}

/** Documents to summarise. */
export interface DocumentsTable {
  readonly id: number;
  readonly title: string;
  readonly body: string;
}

/** One summary per document, written by the AI summary worker. */
export interface DocumentSummariesTable {
  readonly document_id: number;
  readonly summary: string;
  readonly model: string;
  readonly job_id: string;
  readonly created_at: Generated<Date>;
}

/** Customers on a monthly plan: the month-end workflow issues one invoice per subscription active in the month. */
export interface SubscriptionsTable {
  readonly customer_email: string;
  readonly monthly_cents: number;
  /** ISO 4217 code such as `EUR`. */
  readonly currency: string;
  /** First day of the subscription (a `date`). */
  readonly starts_on: ColumnType<Date, string, string>;
  /** Last day of the subscription, or `null` while it runs. */
  readonly ends_on: ColumnType<Date | null, string | null | undefined, string | null>;
}

/** One row per month closed: written with the month-end workflow, in its transaction, so a month is closed once. */
export interface MonthEndClosingsTable {
  /** First day of the month (a `date`; read it as text with `to_char`). */
  readonly month: ColumnType<Date, string, string>;
  readonly workflow_id: string;
  readonly closed_at: Generated<Date>;
}

/**
 * The example application's tables, as Kysely sees them. They live in the
 * same schema as stint's own tables (see `migrateAppSchema`).
 *
 * @example
 * ```ts
 * const db: AppDb = appDatabase(kysely, "stint");
 * const invoice = await db.selectFrom("invoices").selectAll().where("id", "=", 812).executeTakeFirst();
 * ```
 */
export interface AppTables {
  readonly invoices: InvoicesTable;
  readonly invoice_emails: InvoiceEmailsTable;
  readonly undelivered_invoices: UndeliveredInvoicesTable;
  readonly sent_emails: SentEmailsTable;
  readonly reports: ReportsTable;
  readonly audit_events: AuditEventsTable;
  readonly sessions: SessionsTable;
  readonly documents: DocumentsTable;
  readonly document_summaries: DocumentSummariesTable;
  readonly subscriptions: SubscriptionsTable;
  readonly month_end_closings: MonthEndClosingsTable;
}

/** A Kysely instance whose unqualified table names resolve in the app's schema. */
export type AppDb = Kysely<AppTables>;

/**
 * Scopes a Kysely instance to the app's tables in `schema` (validated as an
 * identifier). It shares the instance's pool; nothing is opened.
 *
 * @example
 * ```ts
 * const db = appDatabase(container.resolve(POSTGRES_DB), "stint");
 * await db.selectFrom("invoices").select("id").execute(); // SELECT "id" FROM "stint"."invoices"
 * ```
 */
export function appDatabase(db: Kysely<any>, schema: string): AppDb {
  return db.withSchema(assertSqlIdentifier(schema, "schema")) as AppDb;
}
