import { expect } from "chai";
import { container as rootContainer } from "tsyringe";
import { JOB_STORE, JobClient } from "@stint/core";
import { SendInvoiceEmail } from "../../src/jobs/send-invoice-email";
import { pauseInvoiceEmails, resumeInvoiceEmailsGently } from "../../src/operate/partner-outage";
import { createAppFixture, type AppFixture } from "../support/app-fixture";

describe("operating through a partner outage (QueueAdmin)", () => {
  let app: AppFixture;

  beforeEach(async () => {
    app = await createAppFixture();
  });
  afterEach(async () => {
    await app.drop();
  });

  it("pauses the invoice emails, keeps queueing them, then resumes them under the provider's limits", async () => {
    const container = rootContainer.createChildContainer();
    container.registerInstance(JOB_STORE, app.store);
    expect(await pauseInvoiceEmails(container)).to.include({ queue: SendInvoiceEmail.name, paused: true });
    await new JobClient(app.store).enqueue(SendInvoiceEmail, { invoiceId: 812 });
    expect(await app.store.claimBatch({ queue: SendInvoiceEmail.name, workerId: "w", limit: 10, leaseMs: 60_000 })).to.have.length(0);

    const resumed = await resumeInvoiceEmailsGently(container);
    expect(resumed).to.deep.include({ paused: false, maxRunning: 3, rateLimit: { limit: 100, periodMs: 60_000 } });
    expect(await app.store.claimBatch({ queue: SendInvoiceEmail.name, workerId: "w", limit: 10, leaseMs: 60_000 })).to.have.length(1);
  });
});
