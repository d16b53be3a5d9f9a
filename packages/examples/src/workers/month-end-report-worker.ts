import { JOB_STORE, LOGGER, SchemaQueueWorker, type BackoffOptions, type JobContext, type JobStore, type Logger } from "@stint/core";
import { sql } from "kysely";
import { inject, injectable } from "tsyringe";
import { APP_DB, RETRY_BACKOFF } from "../app-tokens";
import type { AppDb } from "../app/app-tables";
import { monthBounds } from "../app/month-customers";
import { MonthEndInvoice, MonthEndReport, type MonthEndReportResult, type MonthEndTotal } from "../jobs/month-end";

/**
 * The `kind` of the reports the month-end report step stores.
 *
 * @example
 * ```ts
 * await db.selectFrom("reports").selectAll().where("kind", "=", MONTH_END_REPORT).execute();
 * ```
 */
export const MONTH_END_REPORT = "month-end";

/**
 * The last step of a month-end workflow: it runs once, after every
 * invoice step of the month succeeded, reads their results (typed by the
 * `month-end-invoice` kind) with `ctx.dependencies()`, and stores the
 * month's totals per currency in `reports` (one row per month: a re-run
 * replaces it). Enqueued with `ignoreFailedDependencies`, it also runs
 * when invoice steps died, and lists them.
 *
 * @example
 * ```ts
 * step(MonthEndReport, { month: "2026-10" }, { after: ["invoices"] });
 * // result: { reportId: 3, month: "2026-10", invoices: 2, totals: [{ currency: "EUR", invoices: 2, amountCents: 9800 }], failed: [] }
 * ```
 */
@injectable()
export class MonthEndReportWorker extends SchemaQueueWorker<MonthEndReport, MonthEndReportResult> {
  readonly job = MonthEndReport;
  readonly #db: AppDb;

  constructor(
    @inject(JOB_STORE) store: JobStore,
    @inject(LOGGER) log: Logger,
    @inject(APP_DB) db: AppDb,
    @inject(RETRY_BACKOFF) backoff: Partial<BackoffOptions>,
  ) {
    super(store, log, { concurrency: 1, leaseMs: 60_000, backoff });
    this.#db = db;
  }

  protected override async processItem(item: MonthEndReport, ctx: JobContext): Promise<MonthEndReportResult> {
    const dependencies = await ctx.dependencies();
    const invoices = dependencies.results(MonthEndInvoice);
    const failed = dependencies.failed.map((record) => ({ jobId: record.jobId, state: record.state, reason: (record.lastError ?? "").split("\n")[0]! }));
    const totals = new Map<string, MonthEndTotal>();
    for (const invoice of invoices) {
      const total = totals.get(invoice.currency) ?? { currency: invoice.currency, invoices: 0, amountCents: 0 };
      totals.set(invoice.currency, { ...total, invoices: total.invoices + 1, amountCents: total.amountCents + invoice.amountCents });
    }
    const body = { month: item.month, invoices: invoices.length, totals: [...totals.values()].sort((a, b) => a.currency.localeCompare(b.currency)), failed };
    const report = await this.#db
      .insertInto("reports")
      .values({ kind: MONTH_END_REPORT, period_start: monthBounds(item.month).first, body: JSON.stringify(body) })
      .onConflict((conflict) => conflict.columns(["kind", "period_start"]).doUpdateSet({ body: (eb) => eb.ref("excluded.body"), created_at: sql<Date>`now()` }))
      .returning("id")
      .executeTakeFirstOrThrow();
    if (failed.length > 0) ctx.log(`${failed.length} invoice steps failed`, { jobIds: failed.map((failure) => failure.jobId) });
    return { reportId: report.id, ...body };
  }
}
