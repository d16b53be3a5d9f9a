import { JOB_STORE, LOGGER, SchemaQueueWorker, type BackoffOptions, type JobContext, type JobStore, type Logger } from "@stint/core";
import { sql } from "kysely";
import { inject, injectable } from "tsyringe";
import { APP_DB, RETRY_BACKOFF } from "../app-tokens";
import type { AppDb } from "../app/app-tables";
import { SendReportEmail } from "../jobs/send-report-email";
import { recentWeeks } from "../app/recent-weeks";
import { WeeklyReport } from "../jobs/weekly-report";

/**
 * The `kind` of the reports this worker stores.
 *
 * @example
 * ```ts
 * await db.selectFrom("reports").selectAll().where("kind", "=", WEEKLY_INVOICING_REPORT).execute();
 * ```
 */
export const WEEKLY_INVOICING_REPORT = "weekly-invoicing";

/** Invoiced amount of one currency in a report. */
export interface CurrencyTotal {
  readonly currency: string;
  readonly invoices: number;
  readonly amountCents: number;
}

/** The report body stored in `reports.body`. */
export interface WeeklyReportBody {
  readonly weekStart: string;
  /** The Monday after the week (exclusive end). */
  readonly weekEnd: string;
  readonly invoices: number;
  /** Invoices of the week already e-mailed when the report was built. */
  readonly emailed: number;
  readonly totals: readonly CurrencyTotal[];
}

/** What a `weekly-report` job stores as its result: a short receipt, not the whole report. */
export interface WeeklyReportResult {
  readonly reportId: number;
  readonly weekStart: string;
  readonly invoices: number;
  /** The chained `send-report-email` job. */
  readonly emailJobId: string;
}

const DAY_MS = 86_400_000;

/**
 * Builds the invoicing report of one week from the `invoices` table,
 * stores it in `reports` (one row per week: a re-run replaces it), and
 * chains a `send-report-email` job.
 *
 * The report and the chained job are written in one transaction, passed to
 * `ctx.enqueue`: the e-mail job exists if and only if the report was saved.
 * Its dedupe key stops a re-run from queueing a second e-mail while the
 * first is still waiting.
 *
 * @example
 * ```ts
 * await client.enqueue(WeeklyReport, { weekStart: "2025-06-02", recipient: "finance@example.com" });
 * // job result: { reportId: 1, weekStart: "2025-06-02", invoices: 50, emailJobId: "213" }
 * ```
 */
@injectable()
export class WeeklyReportWorker extends SchemaQueueWorker<WeeklyReport> {
  readonly job = WeeklyReport;
  readonly #db: AppDb;

  constructor(
    @inject(JOB_STORE) store: JobStore,
    @inject(LOGGER) log: Logger,
    @inject(APP_DB) db: AppDb,
    @inject(RETRY_BACKOFF) backoff: Partial<BackoffOptions>,
  ) {
    super(store, log, { concurrency: 2, leaseMs: 120_000, backoff });
    this.#db = db;
  }

  protected override async processItem(item: WeeklyReport, ctx: JobContext): Promise<WeeklyReportResult> {
    // A scheduled run names no week: it reports the last full week before it was enqueued (stable across retries).
    const weekStart = item.weekStart ?? recentWeeks(1, ctx.job.createdAt)[0]!;
    const body = await this.#buildReport(weekStart);
    ctx.signal.throwIfAborted();

    return this.#db.transaction().execute(async (trx) => {
      const report = await trx
        .insertInto("reports")
        .values({ kind: WEEKLY_INVOICING_REPORT, period_start: weekStart, body: JSON.stringify(body) })
        .onConflict((conflict) =>
          conflict.columns(["kind", "period_start"]).doUpdateSet({ body: (eb) => eb.ref("excluded.body"), created_at: sql<Date>`now()` }),
        )
        .returning("id")
        .executeTakeFirstOrThrow();
      const email = await ctx.enqueue(
        SendReportEmail,
        { reportId: report.id, recipient: item.recipient },
        { transaction: trx, dedupeKey: `report-email:${report.id}` },
      );
      ctx.log.info(`Stored report ${report.id} for the week of ${weekStart} (${body.invoices} invoices)`);
      return { reportId: report.id, weekStart, invoices: body.invoices, emailJobId: email.id };
    });
  }

  async #buildReport(weekStart: string): Promise<WeeklyReportBody> {
    const from = new Date(`${weekStart}T00:00:00Z`);
    const to = new Date(from.getTime() + 7 * DAY_MS);
    const rows = await this.#db
      .selectFrom("invoices")
      .select(["currency", sql<number>`count(*)::int`.as("invoices"), sql<string>`sum(amount_cents)::bigint`.as("amount_cents")])
      .where("issued_at", ">=", from)
      .where("issued_at", "<", to)
      .groupBy("currency")
      .orderBy("currency")
      .execute();
    const emailed = await this.#db
      .selectFrom("invoice_emails")
      .innerJoin("invoices", "invoices.id", "invoice_emails.invoice_id")
      .select(sql<number>`count(*)::int`.as("count"))
      .where("invoices.issued_at", ">=", from)
      .where("invoices.issued_at", "<", to)
      .executeTakeFirstOrThrow();
    const totals = rows.map((row) => ({ currency: row.currency.trim(), invoices: row.invoices, amountCents: Number(row.amount_cents) }));
    return {
      weekStart,
      weekEnd: to.toISOString().slice(0, 10),
      invoices: totals.reduce((sum, total) => sum + total.invoices, 0),
      emailed: emailed.count,
      totals,
    };
  }
}
