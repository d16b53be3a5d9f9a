import { JOB_STORE, LOGGER, permanent, SchemaQueueWorker, type BackoffOptions, type JobContext, type JobStore, type Logger } from "@stint/core";
import { sql } from "kysely";
import { inject, injectable } from "tsyringe";
import { APP_DB, MAILER, RETRY_BACKOFF } from "../app-tokens";
import type { AppDb } from "../app/app-tables";
import { SendReportEmail } from "../jobs/send-report-email";
import type { Mailer } from "../services/mailer";

/** What a `send-report-email` job stores as its result. */
export interface SendReportEmailResult {
  readonly reportId: number;
  /** False when the report had already been e-mailed. */
  readonly sent: boolean;
  readonly messageId: string | null;
}

/**
 * E-mails a stored report, once. It shows the second way to make a side
 * effect idempotent: a conditional update as the claim
 * (`UPDATE reports SET emailed_at = now() WHERE id = $1 AND emailed_at IS NULL`)
 * in the transaction around the send. The row lock makes a concurrent
 * second run wait, then find `emailed_at` set and send nothing; a failed
 * send rolls the claim back for the retry. It has no `parse`: the job
 * kind's schema checks each payload.
 *
 * @example
 * ```ts
 * await ctx.enqueue(SendReportEmail, { reportId: 3, recipient: "finance@example.com" });
 * ```
 */
@injectable()
export class SendReportEmailWorker extends SchemaQueueWorker<SendReportEmail> {
  readonly job = SendReportEmail;
  readonly #db: AppDb;
  readonly #mailer: Mailer;

  constructor(
    @inject(JOB_STORE) store: JobStore,
    @inject(LOGGER) log: Logger,
    @inject(APP_DB) db: AppDb,
    @inject(MAILER) mailer: Mailer,
    @inject(RETRY_BACKOFF) backoff: Partial<BackoffOptions>,
  ) {
    super(store, log, { concurrency: 2, leaseMs: 60_000, backoff });
    this.#db = db;
    this.#mailer = mailer;
  }

  protected override async processItem(item: SendReportEmail, ctx: JobContext): Promise<SendReportEmailResult> {
    return this.#db.transaction().execute(async (trx) => {
      const report = await trx
        .updateTable("reports")
        .set({ emailed_at: sql<Date>`now()`, emailed_to: item.recipient })
        .where("id", "=", item.reportId)
        .where("emailed_at", "is", null)
        .returning(["id", "kind", "body", sql<string>`to_char(period_start, 'YYYY-MM-DD')`.as("period")])
        .executeTakeFirst();
      if (report === undefined) {
        const exists = await trx.selectFrom("reports").select("id").where("id", "=", item.reportId).executeTakeFirst();
        if (exists === undefined) throw permanent(new Error(`report ${item.reportId} does not exist`));
        ctx.log.info(`Report ${item.reportId} was already e-mailed; sending nothing`);
        return { reportId: item.reportId, sent: false, messageId: null };
      }
      const receipt = await this.#mailer.send(
        {
          to: item.recipient,
          subject: `Report ${report.kind} for ${report.period}`,
          text: `Hello,\n\nhere is the ${report.kind} report for ${report.period}:\n\n${JSON.stringify(report.body, null, 2)}\n`,
          reference: `report:${report.id}`,
        },
        { signal: ctx.signal },
      );
      return { reportId: report.id, sent: true, messageId: receipt.messageId };
    });
  }
}
