import { defineJob } from "@stint/core";
import { PayloadFields } from "./payload-fields";

/** Payload of a `send-invoice-email` job: e-mail one invoice to its customer. */
export interface SendInvoiceEmail {
  readonly invoiceId: number;
}

/** What a `send-invoice-email` job stores as its result (and `client.waitFor` resolves to). */
export interface SendInvoiceEmailResult {
  readonly invoiceId: number;
  /** False when the invoice had already been e-mailed (by an earlier job or attempt). */
  readonly sent: boolean;
  /** The provider's id of the one mail sent for the invoice, by this run or an earlier one. */
  readonly messageId: string | null;
}

/**
 * The `send-invoice-email` job kind. A mail server that is briefly down is
 * worth a few more tries; 30 s is plenty for one send.
 *
 * @example
 * ```ts
 * await client.enqueue(SendInvoiceEmail, { invoiceId: 812 });
 * ```
 */
export const SendInvoiceEmail = defineJob<SendInvoiceEmail, SendInvoiceEmailResult>("send-invoice-email", { maxAttempts: 8, timeoutMs: 30_000 });

/**
 * Validates a stored `send-invoice-email` payload.
 *
 * @example
 * ```ts
 * parseSendInvoiceEmail({ invoiceId: 812 });   // { invoiceId: 812 }
 * parseSendInvoiceEmail({ invoiceId: "abc" }); // throws: invoiceId must be a positive integer, got "abc"
 * ```
 */
export function parseSendInvoiceEmail(payload: unknown): SendInvoiceEmail {
  const fields = PayloadFields.of(payload, ["invoiceId"]);
  return { invoiceId: fields.positiveInteger("invoiceId") };
}
