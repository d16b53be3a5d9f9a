import { expect } from "chai";
import { Client } from "pg";
import { ExitCode, JobClient } from "@stint/core";
import { SendInvoiceEmail } from "../src/jobs/send-invoice-email";
import { createAppFixture, insertInvoices, jobRow, type AppFixture } from "./support/app-fixture";
import { lastJsonLine, startScript } from "./support/run-script";

describe("run-queue.js: one queue's worker in a process, with the exit codes of `stint run --once`", () => {
  let app: AppFixture;

  beforeEach(async () => {
    app = await createAppFixture();
  });
  afterEach(async () => {
    await app.drop();
  });

  function environment(): Record<string, string> {
    return { DATABASE_URL: app.test.connectionString, STINT_SCHEMA: app.test.schema };
  }

  it("drains the queue, prints the run summary and exits 0", async () => {
    await insertInvoices(app.db, [812]);
    const { id } = await new JobClient(app.store).enqueue(SendInvoiceEmail, { invoiceId: 812 });

    const { code, stdout, stderr } = await startScript("run-queue.js", ["send-invoice-email"], environment()).exited;

    expect(code, stderr).to.equal(ExitCode.Ok);
    expect(lastJsonLine(stdout)).to.include({ queue: "send-invoice-email", claimed: 1, succeeded: 1, stoppedBecause: "drained" });
    expect(await jobRow(app.store, id)).to.include({ state: "succeeded" });
  });

  it("exits 130 when SIGTERM stops the run, leaving no job running", async () => {
    await insertInvoices(app.db, [812]);
    const { id } = await new JobClient(app.store).enqueue(SendInvoiceEmail, { invoiceId: 812 });
    // An uncommitted e-mail row for the invoice holds the worker's own insert, so the run cannot end before the signal.
    const blocker = new Client({ connectionString: app.test.connectionString });
    await blocker.connect();
    try {
      await blocker.query("BEGIN");
      await blocker.query(`INSERT INTO "${app.test.schema}".invoice_emails (invoice_id, job_id, recipient) VALUES (812, '0', 'held@example.com')`);
      const run = startScript("run-queue.js", ["send-invoice-email"], environment());
      await run.stderrLine(/Started worker/);
      run.child.kill("SIGTERM");
      await run.stderrLine(/Received SIGTERM/);
      await blocker.query("ROLLBACK");

      const { code, stdout, stderr } = await run.exited;

      expect(code, stderr).to.equal(ExitCode.Interrupted);
      const summary = lastJsonLine(stdout);
      expect(summary).to.include({ queue: "send-invoice-email", stoppedBecause: "signal" });
      // Whether the signal found the job waiting on the held row or not yet claimed, it was finished or given back.
      expect(summary["claimed"]).to.equal((summary["succeeded"] as number) + (summary["released"] as number));
      expect((await jobRow(app.store, id)).state).to.equal(summary["succeeded"] === 1 ? "succeeded" : "queued");
    } finally {
      await blocker.end();
    }
  });

  it("exits 78 for a queue the app has no worker for, naming the ones it has", async () => {
    const { code, stdout, stderr } = await startScript("run-queue.js", ["send-invoices"], environment()).exited;

    expect(code).to.equal(ExitCode.Config);
    expect(stderr).to.contain('no worker is registered for "send-invoices"').and.to.contain("send-invoice-email");
    expect(stdout).to.equal("");
  });

  it("exits 78 without DATABASE_URL, saying so", async () => {
    const { code, stderr } = await startScript("run-queue.js", ["send-invoice-email"], { STINT_SCHEMA: app.test.schema }).exited;

    expect(code).to.equal(ExitCode.Config);
    expect(stderr).to.contain("DATABASE_URL");
  });
});
