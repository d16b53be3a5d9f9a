import {
  AbstractQueueWorker,
  JOB_STORE,
  LOGGER,
  permanent,
  type BackoffOptions,
  type JobContext,
  type JobStore,
  type Logger,
} from "@stint/core";
import { inject, injectable } from "tsyringe";
import { APP_DB, MAILER, RETRY_BACKOFF } from "../app-tokens";
import type { AppDb } from "../app/app-tables";
import { parseSendInvoiceEmail, SendInvoiceEmail } from "../jobs/send-invoice-email";
import type { Mailer, OutgoingMail } from "../services/mailer";

/** What a `send-invoice-email` job stores as its result. */
export interface SendInvoiceEmailResult {
  readonly invoiceId: number;
  /** False when the invoice had already been e-mailed (by an earlier job or attempt). */
  readonly sent: boolean;
  readonly messageId: string | null;
}

/**
 * E-mails an invoice to its customer, at most once per invoice however
 * often the job runs.
 *
 * The send is claimed in the same transaction that surrounds it: an
 * `INSERT … ON CONFLICT DO NOTHING` into `invoice_emails` (keyed on the
 * invoice id), then the send, then the commit. A second job or attempt for
 * the same invoice finds the row and sends nothing; if it runs while the
 * first is still sending, its insert waits on the key until the first
 * commits (and then sends nothing) or rolls back (and then sends). A failed
 * send rolls the claim back, so the retry can send.
 *
 * The remaining window is the one every external side effect has: a mail
 * accepted by the provider whose commit then fails is sent again by the
 * retry. `OutgoingMail.reference` is there for providers that deduplicate.
 *
 * @example
 * ```ts
 * registerWorkers(container, [SendInvoiceEmailWorker]);
 * await client.enqueue(SendInvoiceEmail, { invoiceId: 812 });
 * const summary = await resolveWorker(container, "send-invoice-email").start();
 * ```
 */
@injectable()
export class SendInvoiceEmailWorker extends AbstractQueueWorker<SendInvoiceEmail> {
  readonly job = SendInvoiceEmail;
  readonly #db: AppDb;
  readonly #mailer: Mailer;

  constructor(
    @inject(JOB_STORE) store: JobStore,
    @inject(LOGGER) log: Logger,
    @inject(APP_DB) db: AppDb,
    @inject(MAILER) mailer: Mailer,
    @inject(RETRY_BACKOFF) backoff: Partial<BackoffOptions>,
  ) {
    // Each job holds a connection for its transaction while it sends: keep
    // the concurrency well below the pool size.
    super(store, log, { concurrency: 8, leaseMs: 60_000, backoff });
    this.#db = db;
    this.#mailer = mailer;
  }

  protected override parse(payload: unknown): SendInvoiceEmail {
    return parseSendInvoiceEmail(payload);
  }

  protected override async processItem(item: SendInvoiceEmail, ctx: JobContext): Promise<SendInvoiceEmailResult> {
    const invoice = await this.#db.selectFrom("invoices").selectAll().where("id", "=", item.invoiceId).executeTakeFirst();
    if (invoice === undefined) throw permanent(new Error(`invoice ${item.invoiceId} does not exist`));

    return this.#db.transaction().execute(async (trx) => {
      const claim = await trx
        .insertInto("invoice_emails")
        .values({ invoice_id: invoice.id, job_id: ctx.job.id, recipient: invoice.customer_email })
        .onConflict((conflict) => conflict.column("invoice_id").doNothing())
        .returning("invoice_id")
        .executeTakeFirst();
      if (claim === undefined) {
        ctx.log.info(`Invoice ${invoice.id} was already e-mailed; sending nothing`);
        return { invoiceId: invoice.id, sent: false, messageId: null };
      }
      const mail: OutgoingMail = {
        to: invoice.customer_email,
        subject: `Invoice ${invoice.id}`,
        text: `Hello,\n\nplease find invoice ${invoice.id} over ${formatAmount(invoice.amount_cents, invoice.currency)}, issued ${invoice.issued_at.toISOString().slice(0, 10)}.\n`,
        reference: `invoice:${invoice.id}`,
      };
      const receipt = await this.#mailer.send(mail, { signal: ctx.signal });
      await trx.updateTable("invoice_emails").set({ message_id: receipt.messageId }).where("invoice_id", "=", invoice.id).execute();
      return { invoiceId: invoice.id, sent: true, messageId: receipt.messageId };
    });
  }
}

function formatAmount(cents: number, currency: string): string {
  return `${(cents / 100).toFixed(2)} ${currency.trim()}`;
}
