import { JOB_STORE, LOGGER, SchemaQueueWorker, type BatchContext, type BatchEntry, type JobContext, type JobStore, type Logger } from "@stint/core";
import { inject, injectable, type InjectionToken } from "tsyringe";
import { SendNewsletter } from "../jobs/send-newsletter";
import type { BulkMailer } from "../services/bulk-mailer";
import type { OutgoingMail } from "../services/mailer";

/** Token of the {@link BulkMailer} the newsletter worker sends through. */
export const BULK_MAILER: InjectionToken<BulkMailer> = Symbol.for("stint.examples.BulkMailer");

/**
 * Sends newsletter issues, up to 100 per request to the provider's bulk
 * endpoint. Each job keeps its own outcome: a mail the provider refused
 * fails alone (retried or dead by its own attempts), the rest succeed.
 */
@injectable()
export class SendNewsletterWorker extends SchemaQueueWorker<SendNewsletter> {
  readonly job = SendNewsletter;

  constructor(
    @inject(JOB_STORE) store: JobStore,
    @inject(LOGGER) log: Logger,
    @inject(BULK_MAILER) private readonly mailer: BulkMailer,
  ) {
    super(store, log, { concurrency: 2, batchSize: 100, batchWaitMs: 200 });
  }

  protected override async processBatch(entries: readonly BatchEntry<SendNewsletter>[], ctx: BatchContext<SendNewsletter>): Promise<void> {
    const answers = await this.mailer.sendMany(
      entries.map((entry) => mailFor(entry.item)),
      { signal: ctx.signal },
    );
    entries.forEach((entry, index) => {
      const answer = answers[index];
      if (answer === undefined) ctx.fail(entry, new Error("the provider gave no answer for this mail"));
      else if (answer.ok) ctx.succeed(entry, { messageId: answer.receipt.messageId });
      else ctx.fail(entry, answer.error);
    });
  }

  // One job alone (runJob, or a batch of one) goes through the same bulk call.
  protected override async processItem(item: SendNewsletter, ctx: JobContext): Promise<{ messageId: string }> {
    const [answer] = await this.mailer.sendMany([mailFor(item)], { signal: ctx.signal });
    if (answer === undefined) throw new Error("the provider gave no answer for this mail");
    if (!answer.ok) throw answer.error;
    return { messageId: answer.receipt.messageId };
  }
}

function mailFor({ issue, to }: SendNewsletter): OutgoingMail {
  return { to, subject: `Newsletter #${issue}`, text: `Issue ${issue} of our newsletter.`, reference: `newsletter:${issue}:${to}` };
}
