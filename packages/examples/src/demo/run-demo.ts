import { ConfigError, ErrorCode, JOB_STORE, JobClient, resolveWorkers, type JobStore, type Logger, type LoggerOptions, type PayloadOf } from "@stint/core";
import { assertSqlIdentifier } from "@stint/core/driver";
import { dropSchema, migrate, POSTGRES_DB } from "@stint/postgres-driver";
import { sql, type Kysely } from "kysely";
import { APP_DB } from "../app-tokens";
import { migrateAppSchema } from "../app/app-schema";
import type { AppDb } from "../app/app-tables";
import { createCompositionRoot } from "../composition-root";
import { NightlyCleanup } from "../jobs/nightly-cleanup";
import { FakeLlmClient } from "../services/fake-llm-client";
import type { NightlyCleanupResult } from "../workers/nightly-cleanup-worker";
import { FlakyMailer } from "../services/flaky-mailer";
import { RecordingMailer } from "../services/recording-mailer";
import { seededRandom } from "@stint/core/internal";
import { seedDemoData } from "./demo-data";
import { enqueueDemoWorkload } from "./demo-workload";
import { enqueueRefused, insertWithSql, MALFORMED_PAYLOADS, type RefusedPayload } from "./malformed-payloads";
import { drainQueues } from "./drain-queues";
import { recentWeeks } from "../app/recent-weeks";
import { formatSummaryTable, type SummaryRow } from "./summary-table";
import { closeMonthListingLater } from "../producers/close-month";
import type { MonthEndReportResult } from "../jobs/month-end";

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Where PostgreSQL is (`DATABASE_URL`). */
  readonly connectionString: string;
  /** The schema the demo owns: dropped and re-created at the start when `reset`. Default `"stint_demo"`. */
  readonly schema?: string;
  /** Drop the schema first, so reruns on a persistent database start clean. Default true. */
  readonly reset?: boolean;
  /** Where the report goes. Default standard output. */
  readonly write?: (text: string) => void;
  /** The workers' logger (on standard error). Default: level `STINT_LOG_LEVEL`, else `warn` (retries and dead jobs only). */
  readonly logger?: LoggerOptions | { readonly logger: Logger };
  /** Give up draining after this many ms. Default 30,000. */
  readonly deadlineMs?: number;
  /** Stops the demo early (SIGINT, SIGTERM). */
  readonly signal?: AbortSignal;
}

/** What {@link runDemo} found. */
export interface DemoResult {
  /** 0 when every job reached a final state and every check passed; 1 otherwise. */
  readonly exitCode: 0 | 1;
  /** Malformed payloads `enqueue` refused before inserting anything. */
  readonly refusedAtEnqueue: number;
  /** True when no job was left queued, running or waiting for a retry. */
  readonly drained: boolean;
  readonly rows: readonly SummaryRow[];
  /** Checks that failed (empty on success). */
  readonly problems: readonly string[];
  readonly durationMs: number;
}

const INVOICES = 200;
const DUPLICATE_INVOICE_JOBS = 10;
const DOCUMENTS = 60;
const TOO_LONG_DOCUMENTS = [13, 42];
const WEEKS = 4;
const SUBSCRIPTIONS = 5;
const CLEANUPS: readonly PayloadOf<typeof NightlyCleanup>[] = [
  { target: "audit-events", olderThanDays: 90, batchSize: 200 },
  { target: "expired-sessions", olderThanDays: 1, batchSize: 100 },
  { target: "old-reports", olderThanDays: 365 },
];

/**
 * Runs the example application end to end against a real database:
 * migrates stint's tables and the app's, seeds invoices and documents,
 * enqueues a realistic mix (200 invoice e-mails plus 10 duplicates, 4
 * weekly reports that chain 4 report e-mails, 3 cleanups, 60 AI summaries)
 * and closes last month (a month-end workflow: a step that adds an invoice
 * step per subscription, then a report after all of them), then runs all workers concurrently until no job is active. Some sends
 * fail once with a 503 and some model calls are rate limited, so retries
 * happen; over-long documents end dead.
 *
 * Five malformed payloads take both roads a bad payload can take: through
 * `client.enqueue`, where each job kind's schema refuses them and nothing
 * is inserted, and written with SQL past that check, as a producer from
 * before the schemas would, where the workers' check on claim sends each
 * to dead with the same message.
 *
 * It prints a per-queue table and checks the outcome: every invoice
 * e-mailed exactly once, every report e-mailed, every document that fits
 * summarised, only the expected jobs dead, each malformed one with its
 * schema's message, the month-end workflow succeeded with every invoice in
 * its report.
 *
 * @example
 * ```ts
 * const result = await runDemo({ connectionString: process.env.DATABASE_URL!, schema: "stint_demo" });
 * process.exitCode = result.exitCode;
 * ```
 */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const started = Date.now();
  const schema = assertSqlIdentifier(options.schema ?? "stint_demo", "schema");
  const reset = options.reset ?? true;
  if (reset && schema === "public") throw new ConfigError("schema", 'the demo drops its schema; give it one of its own, not "public"');
  const write = options.write ?? ((text: string) => void process.stdout.write(text));
  const say = (line = ""): void => write(`${line}\n`);

  const app = createCompositionRoot({
    connectionString: options.connectionString,
    schema,
    logger: options.logger ?? { defaultLevel: "warn" },
    // Short delays so that the retries of the demo happen within seconds.
    backoff: { baseMs: 100, maxMs: 1_000 },
    mailer: (db) =>
      new FlakyMailer(new RecordingMailer(db, { latencyMs: 5 }), {
        failFirstAttempt: (mail) => /^invoice:\d*7:email$/.test(mail.reference),
      }),
    llm: new FakeLlmClient({ latencyMs: { min: 20, max: 120 }, rateLimitRate: 0.15, retryAfterMs: 150, random: seededRandom(11) }),
  });
  try {
    const db = app.container.resolve(POSTGRES_DB);
    if (reset) await dropSchema(db, schema);
    await migrate(db, { schema });
    await migrateAppSchema(db, { schema });
    const appDb = app.container.resolve(APP_DB);

    const weeks = recentWeeks(WEEKS, new Date());
    await seedDemoData(appDb, {
      invoices: INVOICES,
      documents: DOCUMENTS,
      tooLongDocuments: TOO_LONG_DOCUMENTS,
      weeks,
      auditEvents: 1_500,
      sessions: 400,
      oldReports: 6,
      subscriptions: SUBSCRIPTIONS,
      random: seededRandom(7),
    });
    const enqueued = await enqueueDemoWorkload(app.container.resolve(JobClient), {
      invoices: INVOICES,
      duplicateInvoiceJobs: DUPLICATE_INVOICE_JOBS,
      weeks,
      reportRecipient: "finance@example.com",
      documents: DOCUMENTS,
      cleanups: CLEANUPS,
    });
    const total = Object.values(enqueued).reduce((sum, n) => sum + n, 0);
    say(`stint demo in schema "${schema}"`);
    say(
      `Enqueued ${total} jobs (${Object.entries(enqueued)
        .map(([queue, n]) => `${queue} ${n}`)
        .join(", ")}), ` + `including ${DUPLICATE_INVOICE_JOBS} duplicate invoice jobs.`,
    );
    const refused = await enqueueRefused(app.container.resolve(JobClient), MALFORMED_PAYLOADS);
    say(`Refused ${refused.length} malformed payloads at enqueue, inserting nothing:`);
    for (const { message } of refused) say(`  ${message}`);
    const writtenWithSql = await insertWithSql(db, schema, MALFORMED_PAYLOADS);
    say(`Wrote the same ${writtenWithSql.length} payloads with SQL, past that check, as a producer from before the schemas would.`);
    const month = previousMonth(new Date());
    const monthEnd = await closeMonthListingLater(appDb, app.container.resolve(JobClient), month);
    say(`Closed ${month}: workflow ${monthEnd.workflowId}, a step that adds one invoice step per subscription (${SUBSCRIPTIONS}), then a report step.`);

    const workers = resolveWorkers(app.container);
    const store = app.container.resolve(JOB_STORE);
    const drain = await drainQueues(workers, store, {
      deadlineMs: options.deadlineMs ?? 30_000,
      pollMs: 25,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const counts = await store.countByQueue({ queues: workers.map((worker) => worker.queue) });
    const rows: SummaryRow[] = drain.queues.map((queue) => {
      const c = counts.find((entry) => entry.queue === queue.queue)?.counts;
      return {
        queue: queue.queue,
        jobs: c === undefined ? 0 : c.queued + c.running + c.failed + c.succeeded + c.dead + c.cancelled,
        succeeded: c?.succeeded ?? 0,
        retried: queue.retried,
        dead: c?.dead ?? 0,
        left: c === undefined ? 0 : c.queued + c.running + c.failed,
        timeMs: queue.busyMs,
      };
    });
    say();
    say(formatSummaryTable(rows));
    say();
    say(
      drain.drained
        ? `Every job reached a final state in ${(drain.durationMs / 1000).toFixed(2)} s.`
        : `Gave up after ${(drain.durationMs / 1000).toFixed(2)} s with ${drain.active} jobs unfinished.`,
    );

    const problems = await checkOutcome(appDb, db, schema, { weeks: weeks.length, refused, writtenWithSql }, say);
    problems.push(...(await checkMonthEnd(app.container.resolve(JobClient), monthEnd.workflowId, say)));
    if (!drain.drained) problems.unshift(`${drain.active} jobs were left unfinished: ${await describeUnfinished(store)}`);
    say(problems.length === 0 ? "All checks passed." : `Problems:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    return Object.freeze({
      exitCode: problems.length === 0 ? 0 : 1,
      refusedAtEnqueue: refused.length,
      drained: drain.drained,
      rows: Object.freeze(rows),
      problems: Object.freeze(problems),
      durationMs: Date.now() - started,
    });
  } finally {
    await app.close();
  }
}

/** What {@link checkOutcome} checks besides the app's tables: the reports expected, and the malformed payloads' two roads. */
interface ExpectedOutcome {
  readonly weeks: number;
  /** What `enqueue` said of each malformed payload, in the order of {@link MALFORMED_PAYLOADS}. */
  readonly refused: readonly RefusedPayload[];
  /** The ids of the same payloads written with SQL, in the same order. */
  readonly writtenWithSql: readonly string[];
}

/** Prints what the jobs achieved and returns what did not turn out as expected. */
async function checkOutcome(appDb: AppDb, db: Kysely<any>, schema: string, expected: ExpectedOutcome, say: (line: string) => void): Promise<string[]> {
  const { weeks } = expected;
  const problems: string[] = [];
  const mails = await appDb
    .selectFrom("sent_emails")
    .select([
      sql<number>`count(*) FILTER (WHERE reference LIKE 'invoice:%')::int`.as("invoiceMails"),
      sql<number>`count(DISTINCT reference) FILTER (WHERE reference LIKE 'invoice:%')::int`.as("invoicesMailed"),
      sql<number>`count(*) FILTER (WHERE reference LIKE 'report:%')::int`.as("reportMails"),
    ])
    .executeTakeFirstOrThrow();
  const summaries = await appDb
    .selectFrom("document_summaries")
    .select(sql<number>`count(*)::int`.as("count"))
    .executeTakeFirstOrThrow();
  const dead = await sql<{
    id: string;
    queue: string;
    last_error: string | null;
    error_code: string | null;
  }>`SELECT id, queue, last_error, error_code FROM ${sql.id(schema, "all_jobs")}
 WHERE state = 'dead' ORDER BY id`.execute(db);

  const cleanups = await sql<{ result: NightlyCleanupResult }>`SELECT result FROM ${sql.id(schema, "all_jobs")}
 WHERE queue = ${NightlyCleanup.name} AND state = 'succeeded' ORDER BY id`.execute(db);
  const staleAuditEvents = await appDb
    .selectFrom("audit_events")
    .select(sql<number>`count(*)::int`.as("count"))
    .where("occurred_at", "<", sql<Date>`now() - interval '90 days'`)
    .executeTakeFirstOrThrow();

  const expectedDead = MALFORMED_PAYLOADS.length + TOO_LONG_DOCUMENTS.length;
  const expect = (ok: boolean, text: string): void => {
    if (!ok) problems.push(text);
  };
  expect(
    mails.invoiceMails === INVOICES && mails.invoicesMailed === INVOICES,
    `invoice e-mails: ${mails.invoiceMails} sent for ${mails.invoicesMailed} of ${INVOICES} invoices`,
  );
  expect(mails.reportMails === weeks, `report e-mails: ${mails.reportMails} sent for ${weeks} reports`);
  expect(summaries.count === DOCUMENTS - TOO_LONG_DOCUMENTS.length, `summaries: ${summaries.count} of ${DOCUMENTS - TOO_LONG_DOCUMENTS.length} documents`);
  expect(dead.rows.length === expectedDead, `dead jobs: ${dead.rows.length}, expected ${expectedDead}`);
  expect(staleAuditEvents.count === 0, `audit events older than 90 days: ${staleAuditEvents.count} left after the cleanup`);
  expected.writtenWithSql.forEach((id, index) => {
    const row = dead.rows.find((candidate) => candidate.id === id);
    const issues = expected.refused[index]?.issues ?? [];
    const named = row?.error_code === ErrorCode.Parse && issues.every((issue) => (row.last_error ?? "").includes(`${issue.path}: ${issue.message}`));
    expect(named, `job ${id}, written with SQL, is not dead with the message enqueue gave: ${row?.last_error ?? "not dead"}`);
  });

  say(
    `E-mails: ${mails.invoiceMails} invoice e-mails for ${mails.invoicesMailed} invoices (${INVOICES + DUPLICATE_INVOICE_JOBS} jobs, each invoice at most once), ${mails.reportMails} report e-mails.`,
  );
  say(
    `Cleanups: ${cleanups.rows.map(({ result }) => `${result.target} ${result.deleted} rows in ${result.batches} ${result.batches === 1 ? "batch" : "batches"}`).join(", ")}.`,
  );
  say(`Summaries: ${summaries.count} of ${DOCUMENTS} documents (${TOO_LONG_DOCUMENTS.length} too long to summarise).`);
  say(
    `Dead jobs (${dead.rows.length}; the ${MALFORMED_PAYLOADS.length} malformed payloads written with SQL and ${TOO_LONG_DOCUMENTS.length} documents too long are expected):`,
  );
  for (const row of dead.rows) say(`  #${row.id} ${row.queue}: ${firstLine(row.last_error)}`);
  return problems;
}

/** Prints what the month-end workflow did and returns what did not turn out as expected: it succeeded, and its report saw every invoice. */
async function checkMonthEnd(client: JobClient, workflowId: string, say: (line: string) => void): Promise<string[]> {
  const workflow = await client.getWorkflow(workflowId);
  const results = await client.waitForWorkflow(workflowId, { timeoutMs: 1_000 }).catch(() => undefined);
  const result = results?.["report"] as MonthEndReportResult | undefined;
  const totals = result?.totals.map((total) => `${total.currency} ${total.invoices}`).join(", ") ?? "none";
  say(`Month-end: workflow ${workflowId} ${workflow?.state ?? "missing"}, ${result?.invoices ?? 0} invoices (${totals}), report #${result?.reportId ?? "?"}.`);
  const problems: string[] = [];
  if (workflow?.state !== "succeeded") problems.push(`month-end workflow ${workflowId} is ${workflow?.state ?? "missing"}, not succeeded`);
  if (result?.invoices !== SUBSCRIPTIONS) problems.push(`month-end report: ${result?.invoices ?? 0} invoices for ${SUBSCRIPTIONS} subscriptions`);
  return problems;
}

/** The month before the one `now` falls in, `YYYY-MM` (UTC). */
function previousMonth(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
}

/** The first line of a stored error, without the error class name. */
function firstLine(text: string | null): string {
  return (text ?? "").split("\n")[0]?.replace(/^\w*Error: /, "") ?? "";
}

/** The jobs a drain left behind, for the message that says so: what state each is in and who holds it. */
async function describeUnfinished(store: JobStore): Promise<string> {
  const jobs = await store.listJobs({ states: ["queued", "running", "failed"], limit: 5 });
  return jobs
    .map((job) =>
      [
        `job ${job.id} (${job.queue}) ${job.state}`,
        `attempt ${job.attempts}/${job.maxAttempts}`,
        `run_at ${job.runAt.toISOString()}`,
        job.lockedBy === null ? "no owner" : `owner ${job.lockedBy} until ${job.lockedUntil?.toISOString() ?? "?"}`,
        job.errorCode === null ? "no error" : `${job.errorCode}: ${(job.lastError ?? "").split("\n")[0]}`,
      ].join(", "),
    )
    .join("; ");
}
