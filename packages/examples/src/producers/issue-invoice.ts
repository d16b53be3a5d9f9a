import type { EnqueueResult, JobClient } from "@stint/core";
import type { AppDb } from "../app/app-tables";
import { SendInvoiceEmail } from "../jobs/send-invoice-email";

/** A new invoice, as the billing code creates it. */
export interface NewInvoice {
  readonly id: number;
  readonly customerEmail: string;
  readonly amountCents: number;
  readonly currency: string;
}

/**
 * Issues an invoice and enqueues its e-mail in one transaction: the job
 * exists if and only if the invoice does (the outbox pattern, with the
 * queue as the outbox). If anything in the transaction fails, neither is
 * written and no worker ever sees the job.
 *
 * @example
 * ```ts
 * const { job } = await issueInvoice(db, client, { id: 812, customerEmail: "ada@example.com", amountCents: 4_200, currency: "EUR" });
 * ```
 */
export async function issueInvoice(db: AppDb, client: JobClient, invoice: NewInvoice): Promise<{ readonly job: EnqueueResult }> {
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto("invoices")
      .values({
        id: invoice.id,
        customer_email: invoice.customerEmail,
        amount_cents: invoice.amountCents,
        currency: invoice.currency,
        issued_at: new Date(),
      })
      .execute();
    const job = await client.enqueue(SendInvoiceEmail, { invoiceId: invoice.id }, { transaction: trx, dedupeKey: `invoice:${invoice.id}` });
    return { job };
  });
}
