import type { MailReceipt, OutgoingMail } from "./mailer";

/** What a bulk send says about one mail: accepted, or refused with the provider's error. */
export type BulkSendAnswer = { readonly ok: true; readonly receipt: MailReceipt } | { readonly ok: false; readonly error: Error };

/**
 * Sends many e-mails in one request, as the bulk endpoints of mail
 * providers do: one answer per mail, in order. Rejects only when the whole
 * request failed.
 *
 * @example
 * ```ts
 * const answers = await bulkMailer.sendMany(mails, { signal: ctx.signal });
 * answers.filter((answer) => !answer.ok).length; // mails the provider refused
 * ```
 */
export interface BulkMailer {
  sendMany(mails: readonly OutgoingMail[], options?: { readonly signal?: AbortSignal }): Promise<readonly BulkSendAnswer[]>;
}
