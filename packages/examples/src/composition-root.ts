import { registerLogger, registerSchedules, registerWorkers, type BackoffOptions, type Logger, type LoggerOptions } from "@stint/core";
import { registerPostgresDriver, type PostgresDriverHandle } from "@stint/postgres-driver";
import { container as rootContainer, type DependencyContainer } from "tsyringe";
import { APP_DB, APP_SCHEMA, LLM_CLIENT, MAILER, RETRY_BACKOFF } from "./app-tokens";
import { appDatabase, type AppDb } from "./app/app-tables";
import { FakeLlmClient } from "./services/fake-llm-client";
import type { LlmClient } from "./services/llm-client";
import type { Mailer } from "./services/mailer";
import { RecordingMailer } from "./services/recording-mailer";
import { AiSummaryWorker } from "./workers/ai-summary-worker";
import { NightlyCleanupWorker } from "./workers/nightly-cleanup-worker";
import { SendInvoiceEmailWorker } from "./workers/send-invoice-email-worker";
import { SendReportEmailWorker } from "./workers/send-report-email-worker";
import { WeeklyReportWorker } from "./workers/weekly-report-worker";
import { MonthEndCustomersWorker } from "./workers/month-end-customers-worker";
import { MonthEndInvoiceWorker } from "./workers/month-end-invoice-worker";
import { MonthEndReportWorker } from "./workers/month-end-report-worker";
import { EXAMPLE_SCHEDULES } from "./schedules";

/**
 * The worker classes of the example application, registered by {@link createCompositionRoot}.
 *
 * @example
 * ```ts
 * registerWorkers(container, EXAMPLE_WORKERS);
 * ```
 */
export const EXAMPLE_WORKERS = Object.freeze([
  SendInvoiceEmailWorker,
  SendReportEmailWorker,
  WeeklyReportWorker,
  NightlyCleanupWorker,
  AiSummaryWorker,
  MonthEndCustomersWorker,
  MonthEndInvoiceWorker,
  MonthEndReportWorker,
] as const);

/** Options of {@link createCompositionRoot}. */
export interface CompositionRootOptions {
  /** Where PostgreSQL is, e.g. `process.env.DATABASE_URL`. */
  readonly connectionString: string;
  /** Schema of stint's tables and the app's tables (migrated beforehand). Default `"stint"`. */
  readonly schema?: string;
  /** Size of the main pool. Default 30: the e-mail workers hold a connection per job while they send. */
  readonly maxConnections?: number;
  /** Options of the winston logger, or a logger to use as is. Default: `info`, JSON unless on a terminal. */
  readonly logger?: LoggerOptions | { readonly logger: Logger };
  /** Builds the mailer from the app database. Default: a `RecordingMailer`. */
  readonly mailer?: (db: AppDb) => Mailer;
  /** The language model client. Default: a `FakeLlmClient` without rate limits. */
  readonly llm?: LlmClient;
  /** Retry backoff of every worker. Default `{}`: stint's defaults (1 s doubling up to an hour). */
  readonly backoff?: Partial<BackoffOptions>;
  /** Parent of the child container. Default tsyringe's root container. */
  readonly parent?: DependencyContainer;
}

/** The wired application: a child container, and how to shut it down. */
export interface CompositionRoot extends AsyncDisposable {
  readonly container: DependencyContainer;
  readonly schema: string;
  /** Disposes the container and closes the pools. Idempotent. */
  close(): Promise<void>;
}

/**
 * The one place the example application is wired: a child container with
 * the logger, the PostgreSQL store (`JOB_STORE`, `POSTGRES_DB`), the app's
 * services under their tokens (`APP_DB`, `APP_SCHEMA`, `MAILER`,
 * `LLM_CLIENT`, `RETRY_BACKOFF`) and the worker classes. Nothing is registered when a
 * module is imported, nothing connects until the first query, and every
 * call gets its own container, so tests and the demo never share state.
 *
 * @example
 * ```ts
 * const app = createCompositionRoot({ connectionString: process.env.DATABASE_URL!, schema: "stint" });
 * try {
 *   const summary = await resolveWorker(app.container, "send-invoice-email").start();
 * } finally {
 *   await app.close();
 * }
 * ```
 */
export function createCompositionRoot(options: CompositionRootOptions): CompositionRoot {
  const schema = options.schema ?? "stint";
  const container = (options.parent ?? rootContainer).createChildContainer();
  registerLogger(container, options.logger ?? {});
  const driver: PostgresDriverHandle = registerPostgresDriver(container, {
    connectionString: options.connectionString,
    schema,
    maxConnections: options.maxConnections ?? 30,
  });
  const db = appDatabase(driver.db, schema);
  container.registerInstance(APP_DB, db);
  container.registerInstance(APP_SCHEMA, schema);
  container.registerInstance(MAILER, options.mailer?.(db) ?? new RecordingMailer(db));
  container.registerInstance(LLM_CLIENT, options.llm ?? new FakeLlmClient());
  container.registerInstance(RETRY_BACKOFF, Object.freeze({ ...options.backoff }));
  registerWorkers(container, EXAMPLE_WORKERS);
  registerSchedules(container, EXAMPLE_SCHEDULES);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await container.dispose();
      await driver.close();
    })();
    return closing;
  };
  return Object.freeze({ container, schema, close, [Symbol.asyncDispose]: close });
}
