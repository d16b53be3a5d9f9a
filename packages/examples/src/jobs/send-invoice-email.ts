import { defineJob, type ItemOf } from "@stint/core";
import { z } from "zod";

/** What a `send-invoice-email` job stores as its result (and `client.waitFor` resolves to). */
export interface SendInvoiceEmailResult {
  readonly invoiceId: number;
  /** False when the invoice had already been e-mailed (by an earlier job or attempt). */
  readonly sent: boolean;
  /** The provider's id of the one mail sent for the invoice, by this run or an earlier one. */
  readonly messageId: string | null;
}

const sendInvoiceEmailPayload = z.strictObject({
  invoiceId: z.int32().positive(),
});

/**
 * The `send-invoice-email` job kind: e-mail one invoice (an `integer` key
 * of the `invoices` table) to its customer. A mail server that is briefly
 * down is worth a few more tries; 30 s is plenty for one send.
 *
 * @example
 * ```ts
 * await client.enqueue(SendInvoiceEmail, { invoiceId: 812 });
 * await client.enqueue(SendInvoiceEmail, { invoiceId: 0 });
 * // PayloadSchemaError: payload of queue "send-invoice-email" failed its schema: payload.invoiceId: Too small: expected number to be >0
 * ```
 */
export const SendInvoiceEmail = defineJob<typeof sendInvoiceEmailPayload, SendInvoiceEmailResult>("send-invoice-email", {
  schema: sendInvoiceEmailPayload,
  maxAttempts: 8,
  timeoutMs: 30_000,
});

/** Payload of a `send-invoice-email` job. */
export type SendInvoiceEmail = ItemOf<typeof SendInvoiceEmail>;
