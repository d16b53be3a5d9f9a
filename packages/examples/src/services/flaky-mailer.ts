import type { Mailer, MailReceipt, OutgoingMail } from "./mailer";

/**
 * The provider answered 503 (busy, try later). `status` lets stint's
 * default error classification treat it as retryable.
 *
 * @example
 * ```ts
 * throw new MailServiceUnavailableError("the mail service is busy");
 * ```
 */
export class MailServiceUnavailableError extends Error {
  readonly status = 503;

  constructor(message: string) {
    super(message);
    this.name = "MailServiceUnavailableError";
  }
}

/** Options of {@link FlakyMailer}. */
export interface FlakyMailerOptions {
  /** Mails whose first send fails with a 503; later sends of the same `reference` go through. */
  readonly failFirstAttempt: (mail: OutgoingMail) => boolean;
}

/**
 * Wraps a mailer and fails the first send of some mails with a 503, the
 * way a real provider does under load. Nothing is delivered by a failed send.
 *
 * @example
 * ```ts
 * const mailer = new FlakyMailer(new RecordingMailer(db), {
 *   failFirstAttempt: (mail) => mail.reference === "invoice:7:email",
 * });
 * ```
 */
export class FlakyMailer implements Mailer {
  readonly #inner: Mailer;
  readonly #options: FlakyMailerOptions;
  readonly #failed = new Set<string>();

  constructor(inner: Mailer, options: FlakyMailerOptions) {
    this.#inner = inner;
    this.#options = options;
  }

  /** How many sends failed on purpose so far. */
  get failures(): number {
    return this.#failed.size;
  }

  async send(mail: OutgoingMail, options: { readonly signal?: AbortSignal } = {}): Promise<MailReceipt> {
    if (!this.#failed.has(mail.reference) && this.#options.failFirstAttempt(mail)) {
      this.#failed.add(mail.reference);
      throw new MailServiceUnavailableError(`mail service unavailable (503) while sending ${mail.reference}`);
    }
    return this.#inner.send(mail, options);
  }
}
