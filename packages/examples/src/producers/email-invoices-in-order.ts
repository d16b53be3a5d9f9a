import type { JobClient } from "@stint/core";
import { SendInvoiceEmail } from "../jobs/send-invoice-email";

/**
 * Queues the e-mails of a customer's invoices so that they go out one at a
 * time, in the order given, whichever worker runs them: each waits until
 * the one before it was sent, and one that keeps failing holds the rest
 * back rather than let a later invoice arrive first.
 *
 * @example
 * ```ts
 * await emailInvoicesInOrder(client, "ada@example.com", [812, 813, 814]);
 * ```
 */
export async function emailInvoicesInOrder(client: JobClient, customerEmail: string, invoiceIds: readonly number[]): Promise<void> {
  for (const invoiceId of invoiceIds) {
    await client.enqueue(SendInvoiceEmail, { invoiceId }, { serialKey: `customer:${customerEmail}` });
  }
}
