import {
  ErrorCode,
  errorCodeOf,
  JOB_STORE,
  LOGGER,
  permanent,
  SchemaQueueWorker,
  type BackoffOptions,
  type DeadJobContext,
  type JobContext,
  type JobRecord,
  type JobStore,
  type Logger,
} from "@stint/core";
import type { Transaction } from "kysely";
import { inject, injectable } from "tsyringe";
import { APP_DB, APP_SCHEMA, MAILER, RETRY_BACKOFF } from "../app-tokens";
import { appDatabase, type AppDb } from "../app/app-tables";
import { SendInvoiceEmail, type SendInvoiceEmailResult } from "../jobs/send-invoice-email";
import type { Mailer, MailReceipt, OutgoingMail } from "../services/mailer";

export type { SendInvoiceEmailResult } from "../jobs/send-invoice-email";

/**
 * E-mails an invoice to its customer, at most once per invoice however
 * often the job runs.
 *
 * The send is an effect of its own, `ctx.once("invoice:<id>:email", …)`:
 * stint records the key in its effects ledger in the transaction that the
 * effect receives, and the effect writes the `invoice_emails` row through
 * that same transaction, so the key, the row and the message id commit
 * together. A second job or attempt for the same invoice finds the key and
 * sends nothing; if it runs while the first is still sending, it waits on
 * the key until the first commits (and then sends nothing) or rolls back
 * (and then sends). A failed send rolls everything back, so the retry can
 * send.
 *
 * The remaining window is the one every external side effect has: a mail
 * accepted by the provider whose commit then fails is sent again by the
 * retry. The key goes to the provider as `OutgoingMail.reference`, its
 * idempotency key, so a provider that deduplicates closes that window too.
 *
 * A job that gives up (an invoice that does not exist, a malformed
 * payload, the mailer failing every attempt, its worker killed on the last
 * one) is written to `undelivered_invoices` by `onDead`, for someone to
 * follow up.
 *
 * @example
 * ```ts
 * registerWorkers(container, [SendInvoiceEmailWorker]);
 * await client.enqueue(SendInvoiceEmail, { invoiceId: 812 });
 * const summary = await resolveWorker(container, "send-invoice-email").start();
 * ```
 */
@injectable()
export class SendInvoiceEmailWorker extends SchemaQueueWorker<SendInvoiceEmail, SendInvoiceEmailResult> {
  readonly job = SendInvoiceEmail;
  readonly #db: AppDb;
  readonly #schema: string;
  readonly #mailer: Mailer;

  constructor(
    @inject(JOB_STORE) store: JobStore,
    @inject(LOGGER) log: Logger,
    @inject(APP_DB) db: AppDb,
    @inject(APP_SCHEMA) schema: string,
    @inject(MAILER) mailer: Mailer,
    @inject(RETRY_BACKOFF) backoff: Partial<BackoffOptions>,
  ) {
    // Each job holds a connection for its effect's transaction while it
    // sends: keep the concurrency well below the pool size.
    super(store, log, { concurrency: 8, leaseMs: 60_000, backoff });
    this.#db = db;
    this.#schema = schema;
    this.#mailer = mailer;
  }

  protected override async processItem(item: SendInvoiceEmail, ctx: JobContext): Promise<SendInvoiceEmailResult> {
    const invoice = await this.#db.selectFrom("invoices").selectAll().where("id", "=", item.invoiceId).executeTakeFirst();
    if (invoice === undefined) throw permanent(new Error(`invoice ${item.invoiceId} does not exist`));

    const key = `invoice:${invoice.id}:email`;
    let sent = false;
    const receipt = await ctx.once(key, async (trx: Transaction<unknown>): Promise<MailReceipt> => {
      const app = appDatabase(trx, this.#schema);
      await app.insertInto("invoice_emails").values({ invoice_id: invoice.id, job_id: ctx.job.id, recipient: invoice.customer_email }).execute();
      const mail: OutgoingMail = {
        to: invoice.customer_email,
        subject: `Invoice ${invoice.id}`,
        text: `Hello,\n\nplease find invoice ${invoice.id} over ${formatAmount(invoice.amount_cents, invoice.currency)}, issued ${invoice.issued_at.toISOString().slice(0, 10)}.\n`,
        reference: key,
      };
      const accepted = await this.#mailer.send(mail, { signal: ctx.signal });
      await app.updateTable("invoice_emails").set({ message_id: accepted.messageId }).where("invoice_id", "=", invoice.id).execute();
      sent = true;
      return accepted;
    });
    if (!sent) ctx.log.info(`Invoice ${invoice.id} was already e-mailed; sending nothing`);
    return { invoiceId: invoice.id, sent, messageId: receipt.messageId };
  }

  protected override async onDead(job: JobRecord, error: Error, ctx: DeadJobContext): Promise<void> {
    await this.#db
      .insertInto("undelivered_invoices")
      .values({
        job_id: job.id,
        attempt: ctx.attempt,
        payload: JSON.stringify(job.payload),
        error_code: errorCodeOf(error) ?? ErrorCode.Unknown,
        reason: error.message,
      })
      .onConflict((conflict) => conflict.columns(["job_id", "attempt"]).doNothing()) // a second delivery of this death
      .execute();
    ctx.log.warn(`Invoice e-mail job ${job.id} gave up after attempt ${ctx.attempt}: ${error.message}`);
  }
}

function formatAmount(cents: number, currency: string): string {
  return `${(cents / 100).toFixed(2)} ${currency.trim()}`;
}
