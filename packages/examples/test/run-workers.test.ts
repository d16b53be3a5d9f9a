import { expect } from "chai";
import { ExitCode, JobClient } from "@stint/core";
import { NightlyCleanup } from "../src/jobs/nightly-cleanup";
import { SendInvoiceEmail } from "../src/jobs/send-invoice-email";
import { createAppFixture, insertInvoices, jobRow, type AppFixture } from "./support/app-fixture";
import { lastJsonLine, startScript } from "./support/run-script";

describe("run-workers.js: the app's workers run from code as `stint run` runs them", () => {
  let app: AppFixture;
  let client: JobClient;

  beforeEach(async () => {
    app = await createAppFixture();
    client = new JobClient(app.store);
    await insertInvoices(app.db, [812]);
  });
  afterEach(async () => {
    await app.drop();
  });

  function environment(): Record<string, string> {
    return { DATABASE_URL: app.test.connectionString, STINT_SCHEMA: app.test.schema };
  }

  it("with --once, drains every queue named, prints the run report and exits 0", async () => {
    const invoice = await client.enqueue(SendInvoiceEmail, { invoiceId: 812 });
    const cleanup = await client.enqueue(NightlyCleanup, { target: "expired-sessions", olderThanDays: 1 });

    const { code, stdout, stderr } = await startScript("run-workers.js", ["send-invoice-email", "nightly-cleanup", "--once"], environment()).exited;

    expect(code, stderr).to.equal(ExitCode.Ok);
    const report = lastJsonLine(stdout);
    expect(report).to.include({ mode: "once", stoppedBecause: "drained", exitCode: ExitCode.Ok });
    expect(report["totals"]).to.include({ claimed: 2, succeeded: 2 });
    for (const { id } of [invoice, cleanup]) expect(await jobRow(app.store, id)).to.include({ state: "succeeded" });
  });

  it("in loop mode, runs jobs until SIGTERM, then exits 0", async () => {
    const run = startScript("run-workers.js", ["send-invoice-email"], environment());
    await run.stderrLine(/Started worker/);
    const job = await client.enqueue(SendInvoiceEmail, { invoiceId: 812 });
    const result = await client.waitFor(job, { timeoutMs: 20_000, pollIntervalMs: 50 });
    run.child.kill("SIGTERM");

    const { code, stdout, stderr } = await run.exited;

    expect(result).to.include({ invoiceId: 812, sent: true });
    expect(code, stderr).to.equal(ExitCode.Ok);
    expect(lastJsonLine(stdout)).to.include({ mode: "loop", stoppedBecause: "signal", exitCode: ExitCode.Ok });
  });

  it("exits 78 for a queue the app has no worker for", async () => {
    const { code, stdout, stderr } = await startScript("run-workers.js", ["send-invoices", "--once"], environment()).exited;

    expect(code).to.equal(ExitCode.Config);
    expect(stderr).to.contain('no worker is registered for "send-invoices"');
    expect(stdout).to.equal("");
  });
});
