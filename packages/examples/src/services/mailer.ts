/** One e-mail to send. */
export interface OutgoingMail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  /**
   * What the mail is about, e.g. `invoice:812:email`: the `ctx.once` key of
   * the send. Mail providers that accept an idempotency key get this one.
   */
  readonly reference: string;
}

/** What a mailer returns once the provider accepted a mail. */
export interface MailReceipt {
  readonly messageId: string;
}

/**
 * Sends e-mail. The workers depend on this interface only (injected with
 * the `MAILER` token); the examples ship a `RecordingMailer` that writes to
 * a table and a `FlakyMailer` that fails like a real provider sometimes does.
 *
 * @example
 * ```ts
 * const receipt = await mailer.send(
 *   { to: "ada@example.com", subject: "Invoice 812", text: "…", reference: "invoice:812:email" },
 *   { signal: ctx.signal },
 * );
 * ```
 */
export interface Mailer {
  /** Resolves once the mail is accepted; rejects (with `status` 5xx for transient trouble) otherwise. */
  send(mail: OutgoingMail, options?: { readonly signal?: AbortSignal }): Promise<MailReceipt>;
}
