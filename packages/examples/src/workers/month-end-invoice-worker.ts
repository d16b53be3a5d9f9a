import { JOB_STORE, LOGGER, permanent, SchemaQueueWorker, type BackoffOptions, type JobContext, type JobStore, type Logger } from "@stint/core";
import { sql, type Transaction } from "kysely";
import { inject, injectable } from "tsyringe";
import { APP_SCHEMA, RETRY_BACKOFF } from "../app-tokens";
import { appDatabase } from "../app/app-tables";
import { MonthEndInvoice, type MonthEndInvoiceResult } from "../jobs/month-end";

/**
 * Issues one customer's invoice for a month from the customer's
 * subscription: a step of the month-end workflow, one per customer.
 *
 * The invoice is written with `ctx.transaction`, in the transaction that
 * also records the step's success, so a retry never issues a second
 * invoice: either both committed, and the step is done, or neither did. A
 * customer whose subscription is gone (cancelled after the month was
 * closed) is a permanent failure: the step is dead, and the report that
 * waits for it is cancelled unless it runs with `ignoreFailedDependencies`.
 *
 * @example
 * ```ts
 * step(MonthEndInvoice, { month: "2026-10", customerEmail: "ada@example.com" });
 * // result: { invoiceId: 1000001, customerEmail: "ada@example.com", amountCents: 4900, currency: "EUR" }
 * ```
 */
@injectable()
export class MonthEndInvoiceWorker extends SchemaQueueWorker<MonthEndInvoice, MonthEndInvoiceResult> {
  readonly job = MonthEndInvoice;
  readonly #schema: string;

  constructor(
    @inject(JOB_STORE) store: JobStore,
    @inject(LOGGER) log: Logger,
    @inject(APP_SCHEMA) schema: string,
    @inject(RETRY_BACKOFF) backoff: Partial<BackoffOptions>,
  ) {
    super(store, log, { concurrency: 4, leaseMs: 60_000, backoff });
    this.#schema = schema;
  }

  protected override async processItem(item: MonthEndInvoice, ctx: JobContext): Promise<MonthEndInvoiceResult> {
    return ctx.transaction(async (trx: Transaction<unknown>) => {
      const app = appDatabase(trx, this.#schema);
      const subscription = await app.selectFrom("subscriptions").selectAll().where("customer_email", "=", item.customerEmail).executeTakeFirst();
      if (subscription === undefined) throw permanent(new Error(`${item.customerEmail} has no subscription to invoice for ${item.month}`));
      const invoice = await app
        .insertInto("invoices")
        .values({
          // The schema is a checked identifier (APP_SCHEMA), quoted here as regclass reads a name.
          id: sql<number>`nextval(${`"${this.#schema}".invoice_numbers`}::regclass)`,
          customer_email: item.customerEmail,
          amount_cents: subscription.monthly_cents,
          currency: subscription.currency,
          issued_at: new Date(),
        })
        .returning(["id", "currency"])
        .executeTakeFirstOrThrow();
      const currency = invoice.currency.trim();
      return { invoiceId: invoice.id, customerEmail: item.customerEmail, amountCents: subscription.monthly_cents, currency };
    });
  }
}
