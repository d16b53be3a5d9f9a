// Public API of @stint/examples. Everything is re-exported here, explicitly.
export { APP_DB, APP_SCHEMA, MAILER, LLM_CLIENT, RETRY_BACKOFF } from "./app-tokens";
export { createCompositionRoot, EXAMPLE_WORKERS } from "./composition-root";
export type { CompositionRoot, CompositionRootOptions } from "./composition-root";

export { migrateAppSchema, appSchemaStatements } from "./app/app-schema";
export type { AppSchemaOptions } from "./app/app-schema";
export { appDatabase } from "./app/app-tables";
export type {
  AppDb,
  AppTables,
  InvoicesTable,
  InvoiceEmailsTable,
  SentEmailsTable,
  ReportsTable,
  AuditEventsTable,
  SessionsTable,
  DocumentsTable,
  DocumentSummariesTable,
  SubscriptionsTable,
  MonthEndClosingsTable,
} from "./app/app-tables";

export { SendInvoiceEmail } from "./jobs/send-invoice-email";
export { SendReportEmail } from "./jobs/send-report-email";
export { WeeklyReport } from "./jobs/weekly-report";
export { NightlyCleanup, CLEANUP_TARGETS, DEFAULT_CLEANUP_BATCH } from "./jobs/nightly-cleanup";
export type { CleanupTarget } from "./jobs/nightly-cleanup";
export { AiSummary, DEFAULT_SUMMARY_WORDS } from "./jobs/ai-summary";
export { MonthEndCustomers, MonthEndInvoice, MonthEndReport } from "./jobs/month-end";
export type { MonthEndCustomersResult, MonthEndInvoiceResult, MonthEndReportResult, MonthEndTotal, MonthEndFailure } from "./jobs/month-end";

export type { Mailer, OutgoingMail, MailReceipt } from "./services/mailer";
export { RecordingMailer } from "./services/recording-mailer";
export type { RecordingMailerOptions } from "./services/recording-mailer";
export { FlakyMailer, MailServiceUnavailableError } from "./services/flaky-mailer";
export type { FlakyMailerOptions } from "./services/flaky-mailer";
export type { LlmClient, CompletionRequest, Completion } from "./services/llm-client";
export { LlmRateLimitError, isRateLimited } from "./services/llm-client";
export { FakeLlmClient } from "./services/fake-llm-client";
export type { FakeLlmClientOptions } from "./services/fake-llm-client";
export { seededRandom } from "@stint/core/internal";

export { SendInvoiceEmailWorker } from "./workers/send-invoice-email-worker";
export type { SendInvoiceEmailResult } from "./workers/send-invoice-email-worker";
export { SendReportEmailWorker } from "./workers/send-report-email-worker";
export type { SendReportEmailResult } from "./workers/send-report-email-worker";
export { WeeklyReportWorker, WEEKLY_INVOICING_REPORT } from "./workers/weekly-report-worker";
export type { WeeklyReportResult, WeeklyReportBody, CurrencyTotal } from "./workers/weekly-report-worker";
export { NightlyCleanupWorker } from "./workers/nightly-cleanup-worker";
export type { NightlyCleanupResult } from "./workers/nightly-cleanup-worker";
export { AiSummaryWorker, MAX_DOCUMENT_CHARS } from "./workers/ai-summary-worker";
export type { AiSummaryResult } from "./workers/ai-summary-worker";
export { MonthEndCustomersWorker } from "./workers/month-end-customers-worker";
export { MonthEndInvoiceWorker } from "./workers/month-end-invoice-worker";
export { MonthEndReportWorker, MONTH_END_REPORT } from "./workers/month-end-report-worker";
export { closeMonth, closeMonthListingLater } from "./producers/close-month";
export type { CloseMonthOptions, MonthEndClosing, MonthEndSteps, MonthEndListingSteps } from "./producers/close-month";
export { customersOfMonth, monthBounds, monthEndWorkflowOf } from "./app/month-customers";

export { runDemo } from "./demo/run-demo";
export type { DemoOptions, DemoResult } from "./demo/run-demo";
export { drainQueues } from "./demo/drain-queues";
export type { DrainOptions, DrainResult, DrainableWorker, QueueDrain } from "./demo/drain-queues";
export { seedDemoData } from "./demo/demo-data";
export type { DemoDataSpec } from "./demo/demo-data";
export { enqueueDemoWorkload } from "./demo/demo-workload";
export type { DemoWorkload, EnqueuedJobs } from "./demo/demo-workload";
export { MALFORMED_PAYLOADS, enqueueRefused, insertWithSql } from "./demo/malformed-payloads";
export type { MalformedPayload, RefusedPayload } from "./demo/malformed-payloads";
export { formatSummaryTable } from "./demo/summary-table";
export type { SummaryRow } from "./demo/summary-table";
export { recentWeeks } from "./app/recent-weeks";
export { EXAMPLE_SCHEDULES, WeeklyReportSchedule, NightlyCleanupSchedules } from "./schedules";
export { createApp, migrate as migrateApp } from "./app";
