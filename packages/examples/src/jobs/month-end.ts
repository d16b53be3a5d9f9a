import { defineJob, type ItemOf } from "@stint/core";
import { z } from "zod";

/** A calendar month, `YYYY-MM`. */
const month = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, "Not a month (YYYY-MM)");

const monthPayload = z.strictObject({ month });

const monthEndInvoicePayload = z.strictObject({
  month,
  customerEmail: z.email(),
});

/** What a `month-end-customers` step returns: how many invoice steps it added. */
export interface MonthEndCustomersResult {
  readonly month: string;
  readonly customers: number;
}

/** What a `month-end-invoice` step returns: the invoice it issued. */
export interface MonthEndInvoiceResult {
  readonly invoiceId: number;
  readonly customerEmail: string;
  readonly amountCents: number;
  readonly currency: string;
}

/** Invoiced amount of one currency in a month-end report. */
export interface MonthEndTotal {
  readonly currency: string;
  readonly invoices: number;
  readonly amountCents: number;
}

/** A month-end invoice step that did not succeed, as the report saw it. */
export interface MonthEndFailure {
  readonly jobId: string;
  readonly state: string;
  /** The first line of its last error. */
  readonly reason: string;
}

/** What a `month-end-report` step returns (and `client.waitFor(workflow)` resolves to as `report`). */
export interface MonthEndReportResult {
  readonly reportId: number;
  readonly month: string;
  readonly invoices: number;
  readonly totals: readonly MonthEndTotal[];
  /** Invoice steps that failed: always empty unless the report runs with `ignoreFailedDependencies`. */
  readonly failed: readonly MonthEndFailure[];
}

/**
 * The `month-end-customers` job kind: a month-end workflow's first step
 * when the customers are listed at run time. It reads the month's
 * subscriptions and adds one `month-end-invoice` step per customer
 * (`ctx.addSteps`), which the report after it then waits for too.
 *
 * @example
 * ```ts
 * await client.enqueueWorkflow("month-end", {
 *   customers: step(MonthEndCustomers, { month: "2026-10" }),
 *   report: step(MonthEndReport, { month: "2026-10" }, { after: ["customers"] }),
 * });
 * ```
 */
export const MonthEndCustomers = defineJob<typeof monthPayload, MonthEndCustomersResult>("month-end-customers", {
  schema: monthPayload,
  maxAttempts: 5,
  timeoutMs: 60_000,
});

/** Payload of a `month-end-customers` step. */
export type MonthEndCustomers = ItemOf<typeof MonthEndCustomers>;

/**
 * The `month-end-invoice` job kind: issue one customer's invoice for a
 * month, from the customer's subscription. One step per customer in a
 * month-end workflow.
 *
 * @example
 * ```ts
 * step(MonthEndInvoice, { month: "2026-10", customerEmail: "ada@example.com" });
 * ```
 */
export const MonthEndInvoice = defineJob<typeof monthEndInvoicePayload, MonthEndInvoiceResult>("month-end-invoice", {
  schema: monthEndInvoicePayload,
  maxAttempts: 5,
  timeoutMs: 30_000,
});

/** Payload of a `month-end-invoice` step. */
export type MonthEndInvoice = ItemOf<typeof MonthEndInvoice>;

/**
 * The `month-end-report` job kind: the last step of a month-end workflow,
 * run once every invoice step succeeded; it totals their results and
 * stores the month's report.
 *
 * @example
 * ```ts
 * step(MonthEndReport, { month: "2026-10" }, { after: ["invoices"] });
 * ```
 */
export const MonthEndReport = defineJob<typeof monthPayload, MonthEndReportResult>("month-end-report", {
  schema: monthPayload,
  maxAttempts: 5,
  timeoutMs: 60_000,
});

/** Payload of a `month-end-report` step. */
export type MonthEndReport = ItemOf<typeof MonthEndReport>;
