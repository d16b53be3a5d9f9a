import { expect } from "chai";
import { ErrorCode, JobClient, PayloadSchemaError } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { sql } from "kysely";
import { drainQueues } from "../../src/demo/drain-queues";
import { SendReportEmail } from "../../src/jobs/send-report-email";
import { WeeklyReport } from "../../src/jobs/weekly-report";
import { FlakyMailer } from "../../src/services/flaky-mailer";
import type { Mailer } from "../../src/services/mailer";
import { RecordingMailer } from "../../src/services/recording-mailer";
import { SendReportEmailWorker } from "../../src/workers/send-report-email-worker";
import { WeeklyReportWorker, type WeeklyReportBody, type WeeklyReportResult } from "../../src/workers/weekly-report-worker";
import { createAppFixture, FAST_BACKOFF, insertInvoices, jobRow, sentEmails, type AppFixture } from "../support/app-fixture";

describe("WeeklyReportWorker and SendReportEmailWorker", () => {
  let app: AppFixture;
  let client: JobClient;

  beforeEach(async () => {
    app = await createAppFixture();
    client = new JobClient(app.store);
    await insertInvoices(app.db, [1, 2, 3], new Date("2025-06-03T10:00:00Z"), 10_000);
    await insertInvoices(app.db, [4], new Date("2025-06-08T23:59:59Z"), 2_500);
    await insertInvoices(app.db, [5], new Date("2025-06-09T00:00:00Z"), 99_999); // the next week
  });
  afterEach(async () => {
    await app.drop();
  });

  function workers(mailer: Mailer = new RecordingMailer(app.db)) {
    return [new WeeklyReportWorker(app.store, app.log, app.db, FAST_BACKOFF), new SendReportEmailWorker(app.store, app.log, app.db, mailer, FAST_BACKOFF)];
  }

  it("stores the week's totals, returns a small result and chains the report e-mail", async () => {
    const { id } = await client.enqueue(WeeklyReport, { weekStart: "2025-06-02", recipient: "finance@example.com" });

    const result = await drainQueues(workers(), app.store, { deadlineMs: 10_000, pollMs: 10 });

    expect(result.drained).to.equal(true);
    const job = await jobRow(app.store, id);
    expect(job.state).to.equal("succeeded");
    const receipt = job.result as WeeklyReportResult;
    expect(receipt).to.include({ weekStart: "2025-06-02", invoices: 4 });
    const report = await app.db.selectFrom("reports").selectAll().where("id", "=", receipt.reportId).executeTakeFirstOrThrow();
    const body = report.body as WeeklyReportBody;
    expect(body).to.deep.include({ weekStart: "2025-06-02", weekEnd: "2025-06-09", invoices: 4, emailed: 0 });
    expect(body.totals).to.deep.equal([{ currency: "EUR", invoices: 4, amountCents: 32_500 }]);
    expect(report.emailed_to).to.equal("finance@example.com");

    const emailJob = await jobRow(app.store, receipt.emailJobId);
    expect(emailJob).to.include({ queue: SendReportEmail.name, state: "succeeded" });
    expect(emailJob.payload).to.deep.equal({ reportId: receipt.reportId, recipient: "finance@example.com" });
    expect(await sentEmails(app.db, `report:${receipt.reportId}`)).to.have.length(1);
  });

  it("reports the last full week before it was enqueued when the payload names none (the weekly schedule)", async () => {
    const { id } = await client.enqueue(WeeklyReport, { recipient: "finance@example.com" });
    await sql`update ${sql.id(app.test.schema, "jobs")} set created_at = '2025-06-10T06:00:00Z' where id = ${id}`.execute(app.test.db);

    await drainQueues(workers(), app.store, { deadlineMs: 10_000, pollMs: 10 });

    const job = await jobRow(app.store, id);
    expect(job.state).to.equal("succeeded");
    expect(job.result).to.include({ weekStart: "2025-06-02", invoices: 4 });
  });

  it("replaces the report on a re-run and does not e-mail it twice", async () => {
    const first = await client.enqueue(WeeklyReport, { weekStart: "2025-06-02", recipient: "finance@example.com" });
    await drainQueues(workers(), app.store, { deadlineMs: 10_000, pollMs: 10 });
    await insertInvoices(app.db, [6], new Date("2025-06-04T12:00:00Z"), 500);
    const second = await client.enqueue(WeeklyReport, { weekStart: "2025-06-02", recipient: "finance@example.com" });

    const result = await drainQueues(workers(), app.store, { deadlineMs: 10_000, pollMs: 10 });

    expect(result.drained).to.equal(true);
    const reports = await app.db.selectFrom("reports").select(["id", "body"]).execute();
    expect(reports).to.have.length(1);
    expect((reports[0]!.body as WeeklyReportBody).invoices).to.equal(5);
    const [a, b] = await Promise.all([jobRow(app.store, first.id), jobRow(app.store, second.id)]);
    expect((a.result as WeeklyReportResult).reportId).to.equal((b.result as WeeklyReportResult).reportId);
    const secondEmail = await jobRow(app.store, (b.result as WeeklyReportResult).emailJobId);
    expect(secondEmail.result).to.deep.include({ sent: false });
    expect(await sentEmails(app.db)).to.have.length(1);
  });

  it("retries a failed report e-mail without losing the claim", async () => {
    const flaky = new FlakyMailer(new RecordingMailer(app.db), { failFirstAttempt: (mail) => mail.reference.startsWith("report:") });
    await client.enqueue(WeeklyReport, { weekStart: "2025-06-02", recipient: "finance@example.com" });

    const result = await drainQueues(workers(flaky), app.store, { deadlineMs: 10_000, pollMs: 10 });

    expect(result.drained).to.equal(true);
    expect(flaky.failures).to.equal(1);
    expect(result.queues.find((queue) => queue.queue === SendReportEmail.name)).to.include({ retried: 1, succeeded: 1 });
    expect(await sentEmails(app.db)).to.have.length(1);
  });

  it("enqueues no e-mail when the report's transaction does not commit", async () => {
    // A deferred trigger fails the commit, after the report and the e-mail job were both written.
    const schema = app.test.schema;
    await sql`CREATE FUNCTION ${sql.id(schema, "refuse_reports")}() RETURNS trigger LANGUAGE plpgsql
      AS $$ BEGIN RAISE EXCEPTION 'reports are read-only today'; END $$`.execute(app.test.db);
    await sql`CREATE CONSTRAINT TRIGGER refuse_reports AFTER INSERT OR UPDATE ON ${sql.id(schema, "reports")}
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${sql.id(schema, "refuse_reports")}()`.execute(app.test.db);
    const { id } = await client.enqueue(WeeklyReport, { weekStart: "2025-06-02", recipient: "finance@example.com" }, { maxAttempts: 1 });

    await workers()[0]!.start();

    const job = await jobRow(app.store, id);
    expect(job).to.include({ state: "dead" });
    expect(job.lastError).to.contain("reports are read-only today");
    const [emails] = await app.store.countByQueue({ queues: [SendReportEmail.name] });
    expect(emails!.counts).to.deep.equal({ blocked: 0, queued: 0, running: 0, failed: 0, succeeded: 0, dead: 0, cancelled: 0 });
  });

  it("refuses a report e-mail whose recipient fails the schema, inserting nothing", async () => {
    const error = await client.enqueue(SendReportEmail, { reportId: 3, recipient: "finance" }).catch((thrown: unknown) => thrown);
    expect(error).to.be.instanceOf(PayloadSchemaError);
    expect((error as PayloadSchemaError).issues.map((issue) => issue.path)).to.deep.equal(["payload.recipient"]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.id(app.test.schema, "all_jobs")}`.execute(app.test.db);
    expect(rows[0]?.n).to.equal(0);
  });

  it("sends a stored report e-mail whose payload fails the schema to dead without mailing", async () => {
    const stored = { ...buildNewJob(SendReportEmail, { reportId: 3, recipient: "x@example.com" }), payloadJson: '{"reportId":3,"recipient":"finance"}' };
    const { id } = await app.store.enqueue(stored);

    await drainQueues(workers(), app.store, { deadlineMs: 10_000, pollMs: 10 });

    const job = await jobRow(app.store, id);
    expect(job).to.include({ state: "dead", attempts: 1, errorCode: ErrorCode.Parse });
    expect(job.lastError).to.match(/^ParseError: invalid payload: payload\.recipient: Invalid email address/);
    expect(await sentEmails(app.db, "report:3")).to.have.length(0);
  });
});
