import { JOB_STORE, LOGGER, SchemaQueueWorker, step, type BackoffOptions, type JobContext, type JobStore, type Logger } from "@stint/core";
import { inject, injectable } from "tsyringe";
import { APP_DB, RETRY_BACKOFF } from "../app-tokens";
import type { AppDb } from "../app/app-tables";
import { customersOfMonth } from "../app/month-customers";
import { MonthEndCustomers, MonthEndInvoice, type MonthEndCustomersResult } from "../jobs/month-end";

/**
 * The first step of a month-end workflow whose customers are listed when
 * it runs rather than when it is enqueued: it reads the month's
 * subscriptions and adds one `month-end-invoice` step per customer with
 * `ctx.addSteps`. The added steps are written with this step's success, in
 * the same transaction, and the report step, which waits for this one,
 * waits for every one of them too.
 *
 * @example
 * ```ts
 * await client.enqueueWorkflow("month-end", {
 *   customers: step(MonthEndCustomers, { month: "2026-10" }),
 *   report: step(MonthEndReport, { month: "2026-10" }, { after: ["customers"] }),
 * });
 * ```
 */
@injectable()
export class MonthEndCustomersWorker extends SchemaQueueWorker<MonthEndCustomers, MonthEndCustomersResult> {
  readonly job = MonthEndCustomers;
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

  protected override async processItem(item: MonthEndCustomers, ctx: JobContext): Promise<MonthEndCustomersResult> {
    const customers = await customersOfMonth(this.#db, item.month);
    if (customers.length > 0) {
      ctx.addSteps({ invoices: customers.map((customerEmail) => step(MonthEndInvoice, { month: item.month, customerEmail })) });
    }
    ctx.log(`Adding ${customers.length} invoice steps`, { month: item.month });
    return { month: item.month, customers: customers.length };
  }
}
