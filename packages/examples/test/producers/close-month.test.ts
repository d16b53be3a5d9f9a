import { expect } from "chai";
import { ErrorCode, JobClient, PayloadSchemaError, WorkflowDefinitionError, WorkflowFailedError } from "@stint/core";
import { sql } from "kysely";
import { drainQueues } from "../../src/demo/drain-queues";
import type { AppDb } from "../../src/app/app-tables";
import { MonthEndInvoice, type MonthEndReportResult } from "../../src/jobs/month-end";
import { closeMonth, closeMonthListingLater } from "../../src/producers/close-month";
import { MonthEndCustomersWorker } from "../../src/workers/month-end-customers-worker";
import { MonthEndInvoiceWorker } from "../../src/workers/month-end-invoice-worker";
import { MONTH_END_REPORT, MonthEndReportWorker } from "../../src/workers/month-end-report-worker";
import { awaitMonthEnd, cancelMonthEnd } from "../../src/operate/month-end-status";
import { createAppFixture, FAST_BACKOFF, jobRow, type AppFixture } from "../support/app-fixture";

/** Subscriptions of October 2026: three running, one ended in September, one starting in November. */
async function insertSubscriptions(db: AppDb): Promise<void> {
  await db
    .insertInto("subscriptions")
    .values([
      { customer_email: "ada@example.com", monthly_cents: 4_900, currency: "EUR", starts_on: "2026-01-01" },
      { customer_email: "grace@example.com", monthly_cents: 9_900, currency: "EUR", starts_on: "2026-10-31" },
      { customer_email: "linus@example.com", monthly_cents: 1_500, currency: "USD", starts_on: "2025-05-01", ends_on: "2026-10-01" },
      { customer_email: "old@example.com", monthly_cents: 100, currency: "EUR", starts_on: "2025-01-01", ends_on: "2026-09-30" },
      { customer_email: "new@example.com", monthly_cents: 100, currency: "EUR", starts_on: "2026-11-01" },
    ])
    .execute();
}

describe("the month-end workflow (closeMonth)", () => {
  let app: AppFixture;
  let client: JobClient;

  beforeEach(async () => {
    app = await createAppFixture();
    client = new JobClient(app.store);
    await insertSubscriptions(app.db);
  });
  afterEach(async () => {
    await app.drop();
  });

  function workers() {
    return [
      new MonthEndCustomersWorker(app.store, app.log, app.db, FAST_BACKOFF),
      new MonthEndInvoiceWorker(app.store, app.log, app.test.schema, FAST_BACKOFF),
      new MonthEndReportWorker(app.store, app.log, app.db, FAST_BACKOFF),
    ];
  }

  const drain = () => drainQueues(workers(), app.store, { deadlineMs: 20_000, pollMs: 10 });

  async function reportRows() {
    return app.db.selectFrom("reports").select(["id", "body"]).where("kind", "=", MONTH_END_REPORT).execute();
  }

  it("issues one invoice per customer of the month, then runs the report once, which sees every invoice's result", async () => {
    const { workflow, workflowId } = await closeMonth(app.db, client, "2026-10");
    expect(workflow).to.not.equal(undefined);
    expect(workflow!.steps.invoices).to.have.length(3);
    const before = await client.getWorkflow(workflowId);
    expect(before!.steps.map((entry) => [entry.step, entry.state])).to.deep.equal([
      ["invoices", "queued"],
      ["invoices", "queued"],
      ["invoices", "queued"],
      ["report", "blocked"],
    ]);

    const result = await drain();

    expect(result.drained).to.equal(true);
    const { report } = await client.waitFor(workflow!, { timeoutMs: 5_000 });
    expect(report!.month).to.equal("2026-10");
    expect(report!.invoices).to.equal(3);
    expect(report!.totals).to.deep.equal([
      { currency: "EUR", invoices: 2, amountCents: 14_800 },
      { currency: "USD", invoices: 1, amountCents: 1_500 },
    ]);
    expect(report!.failed).to.deep.equal([]);
    const invoices = await app.db.selectFrom("invoices").select(["id", "customer_email", "amount_cents"]).orderBy("customer_email").execute();
    expect(invoices.map((invoice) => invoice.customer_email)).to.deep.equal(["ada@example.com", "grace@example.com", "linus@example.com"]);
    expect(invoices.every((invoice) => invoice.id > 1_000_000)).to.equal(true);
    const reports = await reportRows();
    expect(reports).to.have.length(1);
    expect(reports[0]!.id).to.equal(report!.reportId);

    const after = await client.getWorkflow(workflowId);
    expect(after!.state).to.equal("succeeded");
    const reportStep = after!.steps.find((entry) => entry.step === "report")!;
    expect(reportStep.attempts).to.equal(1);
    const lastInvoice = Math.max(...after!.steps.filter((entry) => entry.step === "invoices").map((entry) => entry.finishedAt!.getTime()));
    expect(reportStep.startedAt!.getTime()).to.be.at.least(lastInvoice);
    expect(result.queues.find((queue) => queue.queue === "month-end-report")).to.include({ claimed: 1, succeeded: 1 });
  });

  it("closes a month once: a second closing enqueues nothing and names the first workflow", async () => {
    const first = await closeMonth(app.db, client, "2026-10");
    const second = await closeMonth(app.db, client, "2026-10");

    expect(second).to.deep.equal({ workflowId: first.workflowId, workflow: undefined });
    expect((await client.listWorkflows({ limit: 10 })).map((entry) => entry.id)).to.deep.equal([first.workflowId]);
  });

  it("writes neither the closing nor a step when the transaction does not commit", async () => {
    // A deferred trigger fails the commit, after the workflow and the closing were both written.
    const schema = app.test.schema;
    await sql`CREATE FUNCTION ${sql.id(schema, "refuse_closings")}() RETURNS trigger LANGUAGE plpgsql
      AS $$ BEGIN RAISE EXCEPTION 'the books are locked'; END $$`.execute(app.test.db);
    await sql`CREATE CONSTRAINT TRIGGER refuse_closings AFTER INSERT ON ${sql.id(schema, "month_end_closings")}
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${sql.id(schema, "refuse_closings")}()`.execute(app.test.db);

    const error = await closeMonth(app.db, client, "2026-10").catch((thrown: unknown) => thrown);

    expect(String(error)).to.contain("the books are locked");
    expect(await client.listWorkflows({ limit: 10 })).to.deep.equal([]);
    const [steps] = await app.store.countByQueue({ queues: [MonthEndInvoice.name] });
    expect(steps!.counts).to.deep.equal({ blocked: 0, queued: 0, running: 0, failed: 0, succeeded: 0, dead: 0, cancelled: 0 });
  });

  it("refuses a step whose payload fails its kind's schema, writing nothing", async () => {
    await app.db.insertInto("subscriptions").values({ customer_email: "not-an-email", monthly_cents: 1, currency: "EUR", starts_on: "2026-01-01" }).execute();

    const error = await closeMonth(app.db, client, "2026-10").catch((thrown: unknown) => thrown);

    expect(error).to.be.instanceOf(WorkflowDefinitionError).and.to.include({ step: "invoices" });
    expect((error as WorkflowDefinitionError).cause).to.be.instanceOf(PayloadSchemaError);
    expect((error as WorkflowDefinitionError).message).to.contain('queue "month-end-invoice"');
    expect(await client.listWorkflows({ limit: 10 })).to.deep.equal([]);
    expect(await app.db.selectFrom("month_end_closings").selectAll().execute()).to.deep.equal([]);
  });

  it("cancels the report when an invoice dies, naming the step that failed", async () => {
    const { workflow, workflowId } = await closeMonth(app.db, client, "2026-10");
    // The customer cancels after the month was closed, before the invoice step runs.
    await app.db.deleteFrom("subscriptions").where("customer_email", "=", "grace@example.com").execute();

    const result = await drain();

    expect(result.drained).to.equal(true);
    const after = await client.getWorkflow(workflowId);
    expect(after!.state).to.equal("failed");
    const dead = after!.steps.filter((entry) => entry.state === "dead");
    expect(dead).to.have.length(1);
    expect(dead[0]!.lastError).to.contain("grace@example.com has no subscription to invoice for 2026-10");
    const reportStep = after!.steps.find((entry) => entry.step === "report")!;
    expect(reportStep).to.include({ state: "cancelled", errorCode: ErrorCode.DependencyFailed, attempts: 0 });
    expect(reportStep.lastError).to.equal(`cancelled: step "invoices" (job ${dead[0]!.jobId}) that it waits for is dead`);
    expect(await reportRows()).to.deep.equal([]);

    const error = await client.waitFor(workflow!, { timeoutMs: 5_000 }).catch((thrown: unknown) => thrown);
    expect(error).to.be.instanceOf(WorkflowFailedError);
    expect(error).to.include({ state: "failed", failedStep: "invoices", failedJobId: dead[0]!.jobId });
  });

  it("resumes when the dead invoice is retried: the report comes back and runs once the invoice succeeds", async () => {
    const { workflow, workflowId } = await closeMonth(app.db, client, "2026-10");
    await app.db.deleteFrom("subscriptions").where("customer_email", "=", "grace@example.com").execute();
    await drain();
    const dead = (await client.getWorkflow(workflowId))!.steps.find((entry) => entry.state === "dead")!;

    await app.db
      .insertInto("subscriptions")
      .values({ customer_email: "grace@example.com", monthly_cents: 9_900, currency: "EUR", starts_on: "2026-10-31" })
      .execute();
    expect(await app.store.retryJob({ id: dead.jobId })).to.not.equal(undefined);
    await drain();

    const { report } = await client.waitFor(workflow!, { timeoutMs: 5_000 });
    expect(report!.invoices).to.equal(3);
    expect((await client.getWorkflow(workflowId))!.state).to.equal("succeeded");
  });

  it("runs the report despite a dead invoice when asked to report failures, and lists the failure", async () => {
    const { workflow, workflowId } = await closeMonth(app.db, client, "2026-10", { reportFailures: true });
    await app.db.deleteFrom("subscriptions").where("customer_email", "=", "grace@example.com").execute();

    await drain();

    const after = await client.getWorkflow(workflowId);
    const dead = after!.steps.find((entry) => entry.state === "dead")!;
    const reportStep = after!.steps.find((entry) => entry.step === "report")!;
    expect(reportStep.state).to.equal("succeeded");
    const report = (await jobRow(app.store, reportStep.jobId)).result as MonthEndReportResult;
    expect(report.invoices).to.equal(2);
    expect(report.failed).to.have.length(1);
    expect(report.failed[0]).to.include({ jobId: dead.jobId, state: "dead" });
    expect(report.failed[0]!.reason).to.contain("grace@example.com has no subscription");
    // A step died, so the workflow as a whole failed, though its report ran.
    expect(after!.state).to.equal("failed");
    const error = await client.waitFor(workflow!, { timeoutMs: 5_000 }).catch((thrown: unknown) => thrown);
    expect(error).to.be.instanceOf(WorkflowFailedError);
  });

  it("lists the customers in a first step that adds one invoice step each, which the report waits for too", async () => {
    const { workflow, workflowId } = await closeMonthListingLater(app.db, client, "2026-10");
    expect((await client.getWorkflow(workflowId))!.steps.map((entry) => entry.step)).to.deep.equal(["customers", "report"]);

    const result = await drain();

    expect(result.drained).to.equal(true);
    const { report } = await client.waitFor(workflow!, { timeoutMs: 5_000 });
    expect(report!.invoices).to.equal(3);
    expect(report!.totals.map((total) => total.currency)).to.deep.equal(["EUR", "USD"]);
    const after = await client.getWorkflow(workflowId);
    expect(after!.steps.map((entry) => [entry.step, entry.queue, entry.state])).to.deep.equal([
      ["customers", "month-end-customers", "succeeded"],
      ["report", "month-end-report", "succeeded"],
      ["invoices", MonthEndInvoice.name, "succeeded"],
      ["invoices", MonthEndInvoice.name, "succeeded"],
      ["invoices", MonthEndInvoice.name, "succeeded"],
    ]);
    const reportStep = after!.steps.find((entry) => entry.step === "report")!;
    expect(reportStep.after).to.have.length(4);
  });

  it("runs the report at once for a month without customers", async () => {
    const { workflow } = await closeMonth(app.db, client, "2020-01");
    expect(workflow!.steps.invoices).to.deep.equal([]);

    await drain();

    const { report } = await client.waitFor(workflow!, { timeoutMs: 5_000 });
    expect(report).to.deep.include({ month: "2020-01", invoices: 0, totals: [], failed: [] });
  });

  it("says how a month's closing ended: its report, or the step that failed", async () => {
    expect(await awaitMonthEnd(app.db, client, "2026-10", 1_000)).to.deep.equal({ state: "not-closed" });
    await closeMonth(app.db, client, "2026-10");
    await closeMonth(app.db, client, "2026-09");
    await app.db.deleteFrom("subscriptions").where("customer_email", "=", "linus@example.com").execute();

    await drain();

    const october = await awaitMonthEnd(app.db, client, "2026-10", 5_000);
    expect(october).to.deep.include({ state: "failed", failedStep: "invoices" });
    expect((october as { message: string }).message).to.contain("linus@example.com has no subscription");
    const september = await awaitMonthEnd(app.db, client, "2026-09", 5_000);
    expect(september.state).to.equal("failed");
  });

  it("cancels a month-end: the steps not yet run are cancelled and the wait says so", async () => {
    await closeMonth(app.db, client, "2026-10");

    expect(await cancelMonthEnd(app.db, client, "2026-10")).to.equal(4);
    expect(await cancelMonthEnd(app.db, client, "2026-11")).to.equal(0);

    const result = await drain();
    expect(result.queues.reduce((sum, queue) => sum + queue.claimed, 0)).to.equal(0);
    const outcome = await awaitMonthEnd(app.db, client, "2026-10", 5_000);
    expect(outcome.state).to.equal("cancelled");
    expect(await app.db.selectFrom("invoices").selectAll().execute()).to.deep.equal([]);
  });
});
