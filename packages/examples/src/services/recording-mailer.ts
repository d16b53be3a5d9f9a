import { setTimeout as delay } from "node:timers/promises";
import type { AppDb } from "../app/app-tables";
import type { Mailer, MailReceipt, OutgoingMail } from "./mailer";

/** Options of {@link RecordingMailer}. */
export interface RecordingMailerOptions {
  /** Simulated time a provider takes to accept a mail, in ms. Default 0. */
  readonly latencyMs?: number;
}

/**
 * A mailer that "sends" by inserting a row into `sent_emails`, so the demo
 * and the tests can count exactly what went out. The insert uses its own
 * pooled connection, outside any caller transaction, like a real provider
 * that cannot be rolled back.
 *
 * @example
 * ```ts
 * const mailer = new RecordingMailer(db, { latencyMs: 5 });
 * await mailer.send({ to: "ada@example.com", subject: "Hi", text: "…", reference: "welcome:1" });
 * await db.selectFrom("sent_emails").selectAll().execute(); // one row
 * ```
 */
export class RecordingMailer implements Mailer {
  readonly #db: AppDb;
  readonly #latencyMs: number;

  constructor(db: AppDb, options: RecordingMailerOptions = {}) {
    this.#db = db;
    this.#latencyMs = options.latencyMs ?? 0;
  }

  async send(mail: OutgoingMail, options: { readonly signal?: AbortSignal } = {}): Promise<MailReceipt> {
    if (this.#latencyMs > 0) await delay(this.#latencyMs, undefined, { signal: options.signal });
    options.signal?.throwIfAborted();
    const row = await this.#db
      .insertInto("sent_emails")
      .values({ to_address: mail.to, subject: mail.subject, body: mail.text, reference: mail.reference })
      .returning("id")
      .executeTakeFirstOrThrow();
    return { messageId: `sent-email-${row.id}` };
  }
}
