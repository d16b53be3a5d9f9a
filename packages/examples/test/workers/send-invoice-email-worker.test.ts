import { expect } from "chai";
import { JobClient, ErrorCode, RetryableError, type JobContext } from "@stint/core";
import { drainQueues } from "../../src/demo/drain-queues";
import { SendInvoiceEmail } from "../../src/jobs/send-invoice-email";
import { FlakyMailer, MailServiceUnavailableError } from "../../src/services/flaky-mailer";
import type { Mailer } from "../../src/services/mailer";
import { RecordingMailer } from "../../src/services/recording-mailer";
import { SendInvoiceEmailWorker, type SendInvoiceEmailResult } from "../../src/workers/send-invoice-email-worker";
import { createAppFixture, FAST_BACKOFF, insertInvoices, jobRow, sentEmails, writtenWithSql, type AppFixture } from "../support/app-fixture";

/** Counts handler calls, to tell "not called" from "called and did nothing". */
class CountingInvoiceWorker extends SendInvoiceEmailWorker {
  calls = 0;

  protected override async processItem(item: SendInvoiceEmail, ctx: JobContext): Promise<SendInvoiceEmailResult> {
    this.calls += 1;
    return super.processItem(item, ctx);
  }
}

/** Sends, then fails the first attempt as if the process died before recording the outcome. */
class CrashAfterSendWorker extends SendInvoiceEmailWorker {
  protected override async processItem(item: SendInvoiceEmail, ctx: JobContext): Promise<SendInvoiceEmailResult> {
    const result = await super.processItem(item, ctx);
    if (ctx.job.attempt === 1) throw new RetryableError("lost the connection before the job was marked done");
    return result;
  }
}

describe("SendInvoiceEmailWorker", () => {
  let app: AppFixture;
  let client: JobClient;

  beforeEach(async () => {
    app = await createAppFixture();
    client = new JobClient(app.store);
  });
  afterEach(async () => {
    await app.drop();
  });

  function worker(mailer: Mailer = new RecordingMailer(app.db)): CountingInvoiceWorker {
    return new CountingInvoiceWorker(app.store, app.log, app.db, app.test.schema, mailer, FAST_BACKOFF);
  }

  it("e-mails an invoice to its customer and records the send", async () => {
    await insertInvoices(app.db, [812]);
    const { id } = await client.enqueue(SendInvoiceEmail, { invoiceId: 812 });

    const summary = await worker().start();

    expect(summary).to.include({ claimed: 1, succeeded: 1, dead: 0 });
    const job = await jobRow(app.store, id);
    expect(job.state).to.equal("succeeded");
    expect(job.result).to.deep.include({ invoiceId: 812, sent: true });
    expect(await sentEmails(app.db)).to.deep.equal([{ to_address: "customer812@example.com", subject: "Invoice 812", reference: "invoice:812:email" }]);
    const claim = await app.db.selectFrom("invoice_emails").selectAll().where("invoice_id", "=", 812).executeTakeFirstOrThrow();
    expect(claim.job_id).to.equal(id);
    expect(claim.message_id).to.match(/^sent-email-\d+$/);
  });

  it("sends once when two jobs for the same invoice run at the same time", async () => {
    await insertInvoices(app.db, [812]);
    // No dedupe key: the producer enqueued the same invoice twice.
    const jobs = await client.enqueueMany(SendInvoiceEmail, [{ payload: { invoiceId: 812 } }, { payload: { invoiceId: 812 } }]);
    // A slow provider keeps the first send open while the second job runs.
    const runner = worker(new RecordingMailer(app.db, { latencyMs: 100 }));

    const summary = await runner.start();

    expect(summary).to.include({ claimed: 2, succeeded: 2, dead: 0 });
    expect(runner.calls).to.equal(2);
    expect(await sentEmails(app.db, "invoice:812:email")).to.have.length(1);
    const results = await Promise.all(jobs.map(async ({ id }) => (await jobRow(app.store, id)).result as SendInvoiceEmailResult));
    expect(results.map((result) => result.sent).sort()).to.deep.equal([false, true]);
    expect(results[0]?.messageId, "both jobs report the one mail sent")
      .to.equal(results[1]?.messageId)
      .and.match(/^sent-email-\d+$/);
  });

  it("sends nothing when the same job runs again after its send went through", async () => {
    await insertInvoices(app.db, [812]);
    const { id } = await client.enqueue(SendInvoiceEmail, { invoiceId: 812 });
    const crashing = new CrashAfterSendWorker(app.store, app.log, app.db, app.test.schema, new RecordingMailer(app.db), FAST_BACKOFF);

    const result = await drainQueues([crashing], app.store, { deadlineMs: 10_000, pollMs: 10 });

    expect(result.drained).to.equal(true);
    const job = await jobRow(app.store, id);
    expect(job).to.include({ state: "succeeded", attempts: 2 });
    expect(job.result).to.deep.include({ invoiceId: 812, sent: false });
    expect(await sentEmails(app.db, "invoice:812:email")).to.have.length(1);
  });

  it("retries a 503 from the mail service and then sends exactly once", async () => {
    await insertInvoices(app.db, [1, 2, 3]);
    const flaky = new FlakyMailer(new RecordingMailer(app.db), { failFirstAttempt: (mail) => mail.reference === "invoice:2:email" });
    const jobs = await client.enqueueMany(
      SendInvoiceEmail,
      [1, 2, 3].map((invoiceId) => ({ payload: { invoiceId } })),
    );

    const result = await drainQueues([worker(flaky)], app.store, { deadlineMs: 10_000, pollMs: 10 });

    expect(result.drained).to.equal(true);
    expect(result.queues[0]).to.include({ succeeded: 3, retried: 1, dead: 0 });
    expect(flaky.failures).to.equal(1);
    const retried = await jobRow(app.store, jobs[1]!.id);
    expect(retried).to.include({ state: "succeeded", attempts: 2 });
    expect(retried.lastError).to.contain("mail service unavailable (503)");
    for (const invoiceId of [1, 2, 3]) expect(await sentEmails(app.db, `invoice:${invoiceId}:email`)).to.have.length(1);
  });

  it("sends a malformed payload written with SQL to dead at once, naming the field, without calling the handler", async () => {
    const id = await writtenWithSql(app, SendInvoiceEmail, { invoiceId: "abc" });
    const runner = worker();

    const summary = await runner.start();

    expect(summary).to.include({ claimed: 1, dead: 1, retried: 0 });
    expect(runner.calls).to.equal(0);
    const job = await jobRow(app.store, id);
    expect(job).to.include({ state: "dead", attempts: 1, errorCode: ErrorCode.Parse });
    expect(job.lastError).to.contain("payload.invoiceId: Invalid input: expected number, received string");
    expect(await sentEmails(app.db)).to.have.length(0);
  });

  it("gives up at once on an invoice that does not exist", async () => {
    const { id } = await client.enqueue(SendInvoiceEmail, { invoiceId: 404 });

    await worker().start();

    const job = await jobRow(app.store, id);
    expect(job).to.include({ state: "dead", attempts: 1, errorCode: ErrorCode.Permanent });
    expect(job.lastError).to.contain("invoice 404 does not exist");
  });

  it("records each job it gives up on in undelivered_invoices, once, whatever the reason", async () => {
    await insertInvoices(app.db, [7]);
    const { id: missing } = await client.enqueue(SendInvoiceEmail, { invoiceId: 404 });
    const malformed = await writtenWithSql(app, SendInvoiceEmail, { invoiceId: "abc" });
    const { id: undeliverable } = await client.enqueue(SendInvoiceEmail, { invoiceId: 7 }, { maxAttempts: 1 });

    const down: Mailer = { send: () => Promise.reject(new MailServiceUnavailableError("the mail service is down")) };
    await worker(down).start();

    const rows = await app.db.selectFrom("undelivered_invoices").select(["job_id", "attempt", "payload", "error_code", "reason"]).orderBy("job_id").execute();
    expect(rows).to.deep.equal([
      { job_id: missing, attempt: 1, payload: { invoiceId: 404 }, error_code: ErrorCode.Permanent, reason: "invoice 404 does not exist" },
      {
        job_id: malformed,
        attempt: 1,
        payload: { invoiceId: "abc" },
        error_code: ErrorCode.Parse,
        reason: "invalid payload: payload.invoiceId: Invalid input: expected number, received string",
      },
      { job_id: undeliverable, attempt: 1, payload: { invoiceId: 7 }, error_code: ErrorCode.Unknown, reason: "the mail service is down" },
    ]);
  });
});
