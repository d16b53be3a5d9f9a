import { step, type EnqueuedWorkflow, type JobClient, type PayloadOf, type WorkflowStep } from "@stint/core";
import type { Transaction } from "kysely";
import type { AppDb, AppTables } from "../app/app-tables";
import { customersOfMonth, monthBounds, monthEndWorkflowOf } from "../app/month-customers";
import {
  MonthEndCustomers,
  MonthEndInvoice,
  MonthEndReport,
  type MonthEndCustomersResult,
  type MonthEndInvoiceResult,
  type MonthEndReportResult,
} from "../jobs/month-end";

/** Options of {@link closeMonth} and {@link closeMonthListingLater}. */
export interface CloseMonthOptions {
  /**
   * Run the report even when invoice steps died, listing them in its
   * result (`ignoreFailedDependencies`). Default false: a dead invoice
   * cancels the report.
   */
  readonly reportFailures?: boolean;
}

/** The steps of a month-end workflow whose invoices are listed when it is enqueued. */
export type MonthEndSteps = {
  readonly invoices: readonly WorkflowStep<PayloadOf<typeof MonthEndInvoice>, MonthEndInvoiceResult>[];
  readonly report: WorkflowStep<PayloadOf<typeof MonthEndReport>, MonthEndReportResult>;
};

/** The steps of a month-end workflow whose first step lists the invoices when it runs. */
export type MonthEndListingSteps = {
  readonly customers: WorkflowStep<PayloadOf<typeof MonthEndCustomers>, MonthEndCustomersResult>;
  readonly report: WorkflowStep<PayloadOf<typeof MonthEndReport>, MonthEndReportResult>;
};

/** What closing a month did. */
export interface MonthEndClosing<S extends MonthEndSteps | MonthEndListingSteps> {
  readonly workflowId: string;
  /** The workflow enqueued now, typed for `client.waitFor`; `undefined` when the month had been closed before (nothing was enqueued). */
  readonly workflow: EnqueuedWorkflow<S> | undefined;
}

/**
 * Closes a month: records the closing and enqueues its month-end
 * workflow in one transaction, one `month-end-invoice` step per customer
 * subscribed in the month (listed now, in the same transaction) and a
 * `month-end-report` step after all of them. Either the closing row and
 * every step are written, or nothing is; a month already closed enqueues
 * nothing and answers with its workflow's id.
 *
 * @example
 * ```ts
 * const { workflow } = await closeMonth(db, client, "2026-10");
 * if (workflow !== undefined) {
 *   const { report } = await client.waitFor(workflow); // MonthEndReportResult
 * }
 * ```
 */
export async function closeMonth(db: AppDb, client: JobClient, month: string, options: CloseMonthOptions = {}): Promise<MonthEndClosing<MonthEndSteps>> {
  return db.transaction().execute(async (trx) => {
    const closed = await monthEndWorkflowOf(trx, month);
    if (closed !== undefined) return { workflowId: closed, workflow: undefined };
    const customers = await customersOfMonth(trx, month);
    const workflow = await client.enqueueWorkflow(
      "month-end",
      {
        invoices: customers.map((customerEmail) => step(MonthEndInvoice, { month, customerEmail })),
        report: step(MonthEndReport, { month }, { after: ["invoices"], ignoreFailedDependencies: options.reportFailures === true }),
      },
      { transaction: trx },
    );
    await recordClosing(trx, month, workflow.id);
    return { workflowId: workflow.id, workflow };
  });
}

/**
 * Closes a month as {@link closeMonth} does, but leaves listing the
 * customers to the workflow's first step (`month-end-customers`), which
 * adds one invoice step per customer when it runs: the enqueue stays one
 * small insert however many customers there are.
 *
 * @example
 * ```ts
 * const { workflow } = await closeMonthListingLater(db, client, "2026-10");
 * ```
 */
export async function closeMonthListingLater(
  db: AppDb,
  client: JobClient,
  month: string,
  options: CloseMonthOptions = {},
): Promise<MonthEndClosing<MonthEndListingSteps>> {
  return db.transaction().execute(async (trx) => {
    const closed = await monthEndWorkflowOf(trx, month);
    if (closed !== undefined) return { workflowId: closed, workflow: undefined };
    const workflow = await client.enqueueWorkflow(
      "month-end",
      {
        customers: step(MonthEndCustomers, { month }),
        report: step(MonthEndReport, { month }, { after: ["customers"], ignoreFailedDependencies: options.reportFailures === true }),
      },
      { transaction: trx },
    );
    await recordClosing(trx, month, workflow.id);
    return { workflowId: workflow.id, workflow };
  });
}

/** Records the closing: a concurrent closing of the same month fails here on the primary key, and its workflow rolls back with it. */
async function recordClosing(trx: Transaction<AppTables>, month: string, workflowId: string): Promise<void> {
  await trx
    .insertInto("month_end_closings")
    .values({ month: monthBounds(month).first, workflow_id: workflowId })
    .execute();
}
