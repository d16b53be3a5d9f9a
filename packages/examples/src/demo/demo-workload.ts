import type { JobClient, PayloadOf } from "@stint/core";
import { AiSummary } from "../jobs/ai-summary";
import { NightlyCleanup } from "../jobs/nightly-cleanup";
import { SendInvoiceEmail } from "../jobs/send-invoice-email";
import { WeeklyReport } from "../jobs/weekly-report";

/** The jobs {@link enqueueDemoWorkload} puts in the queues. */
export interface DemoWorkload {
  /** One `send-invoice-email` job per invoice 1…n. */
  readonly invoices: number;
  /** Extra jobs for invoices 1…n, as a producer that retried its request would enqueue (no dedupe key). */
  readonly duplicateInvoiceJobs: number;
  /** One `weekly-report` job per Monday. */
  readonly weeks: readonly string[];
  /** Who gets the weekly reports. */
  readonly reportRecipient: string;
  /** One `ai-summary` job per document 1…n. */
  readonly documents: number;
  /** The `nightly-cleanup` jobs. */
  readonly cleanups: readonly PayloadOf<typeof NightlyCleanup>[];
}

/** How many jobs went into each queue. */
export type EnqueuedJobs = Readonly<Record<string, number>>;

/**
 * Enqueues the demo's mix of work with typed producers, a batch per kind.
 *
 * @example
 * ```ts
 * const enqueued = await enqueueDemoWorkload(container.resolve(JobClient), {
 *   invoices: 200, duplicateInvoiceJobs: 10, weeks: ["2025-06-02"], reportRecipient: "finance@example.com",
 *   documents: 60, cleanups: [{ target: "audit-events", olderThanDays: 90 }],
 * });
 * enqueued["send-invoice-email"]; // 210
 * ```
 */
export async function enqueueDemoWorkload(client: JobClient, workload: DemoWorkload): Promise<EnqueuedJobs> {
  const counts: Record<string, number> = {};
  const count = (queue: string, n: number): void => {
    counts[queue] = (counts[queue] ?? 0) + n;
  };

  const invoiceIds = Array.from({ length: workload.invoices }, (_, index) => index + 1);
  const duplicates = invoiceIds.slice(0, workload.duplicateInvoiceJobs);
  const invoiceJobs = await client.enqueueMany(
    SendInvoiceEmail,
    [...invoiceIds, ...duplicates].map((invoiceId) => ({ payload: { invoiceId } })),
  );
  count(SendInvoiceEmail.name, invoiceJobs.length);

  const reports = await client.enqueueMany(
    WeeklyReport,
    workload.weeks.map((weekStart) => ({ payload: { weekStart, recipient: workload.reportRecipient }, options: { dedupeKey: `weekly-report:${weekStart}` } })),
  );
  count(WeeklyReport.name, reports.length);

  const summaries = await client.enqueueMany(
    AiSummary,
    Array.from({ length: workload.documents }, (_, index) => ({ payload: { documentId: index + 1 } })),
  );
  count(AiSummary.name, summaries.length);

  for (const cleanup of workload.cleanups) {
    await client.enqueue(NightlyCleanup, cleanup);
    count(NightlyCleanup.name, 1);
  }

  return Object.freeze(counts);
}
