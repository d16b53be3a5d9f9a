import { QueueAdmin, type QueueControls } from "@stint/core";
import type { DependencyContainer } from "tsyringe";
import { SendInvoiceEmail } from "../jobs/send-invoice-email";

/**
 * What an operator runs when the email provider is down: stop sending
 * (running jobs finish, new invoices still queue up), and, once it is
 * back, resume with the provider's limits so the backlog does not trip
 * them: at most 3 sends at once across every worker, 100 a minute.
 *
 * @example
 * ```ts
 * await pauseInvoiceEmails(container);
 * // … the provider is back …
 * await resumeInvoiceEmailsGently(container);
 * ```
 */
export async function pauseInvoiceEmails(container: DependencyContainer): Promise<QueueControls> {
  const admin = container.resolve(QueueAdmin);
  return admin.pause(SendInvoiceEmail);
}

/** Resumes the invoice emails under the provider's limits (see {@link pauseInvoiceEmails}). */
export async function resumeInvoiceEmailsGently(container: DependencyContainer): Promise<QueueControls> {
  const admin = container.resolve(QueueAdmin);
  await admin.limit(SendInvoiceEmail, { maxRunning: 3, rateLimit: "100/min" });
  return admin.resume(SendInvoiceEmail);
}
