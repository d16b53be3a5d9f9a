import { ErrorCode, hasErrorCode, type JobClient, type JobFailedError } from "@stint/core";
import { SendInvoiceEmail, type SendInvoiceEmailResult } from "../jobs/send-invoice-email";

/**
 * For a request that must answer "sent" (a "send it now" button): e-mails
 * the invoice through the queue, so retries and the once-per-invoice
 * guarantee still hold, and waits up to 30 s for the outcome.
 *
 * @example
 * ```ts
 * const { messageId } = await emailInvoiceNow(container.resolve(JobClient), 812);
 * ```
 */
export async function emailInvoiceNow(client: JobClient, invoiceId: number): Promise<SendInvoiceEmailResult> {
  const job = await client.enqueue(SendInvoiceEmail, { invoiceId });
  return client.waitFor(job, { timeoutMs: 30_000 });
}

/**
 * What to tell the user about an invoice e-mail job enqueued earlier:
 * waits for it (up to 30 s), and turns a job that gave up or was
 * cancelled into a sentence instead of an exception.
 *
 * @example
 * ```ts
 * await describeInvoiceEmail(client, "812"); // "sent as sent-email-1"
 * ```
 */
export async function describeInvoiceEmail(client: JobClient, jobId: string): Promise<string> {
  try {
    const { sent, messageId } = await client.waitFor(SendInvoiceEmail, jobId, { timeoutMs: 30_000 });
    return sent ? `sent as ${messageId}` : `already sent earlier as ${messageId}`;
  } catch (error) {
    if (!hasErrorCode(error, ErrorCode.JobFailed)) throw error;
    const failed = error as JobFailedError;
    return `not sent: the job is ${failed.state} after ${failed.attempts} attempts (${failed.lastErrorCode ?? "no error code"})`;
  }
}
