import { expect } from "chai";
import { JobClient } from "@stint/core";
import { SendInvoiceEmail } from "../../src/jobs/send-invoice-email";
import { issueInvoice } from "../../src/producers/issue-invoice";
import { createAppFixture, type AppFixture } from "../support/app-fixture";

describe("issueInvoice (transactional enqueue)", () => {
  let app: AppFixture;

  beforeEach(async () => {
    app = await createAppFixture();
  });
  afterEach(async () => {
    await app.drop();
  });

  it("commits the invoice and its e-mail job together", async () => {
    const client = new JobClient(app.store);
    const { job } = await issueInvoice(app.db, client, { id: 812, customerEmail: "ada@example.com", amountCents: 4_200, currency: "EUR" });
    const stored = await app.store.getJob({ id: job.id });
    expect(stored).to.include({ queue: "send-invoice-email", state: "queued", dedupeKey: "invoice:812" });
    expect(stored?.payload).to.deep.equal({ invoiceId: 812 });
  });

  it("writes neither the invoice nor the job when the transaction fails", async () => {
    const client = new JobClient(app.store);
    await issueInvoice(app.db, client, { id: 1, customerEmail: "first@example.com", amountCents: 100, currency: "EUR" });
    // The same invoice id again: the invoice insert fails, so no second job may exist.
    const failed = await issueInvoice(app.db, client, { id: 1, customerEmail: "again@example.com", amountCents: 100, currency: "EUR" }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).to.be.instanceOf(Error);
    const counts = await app.store.countByQueue({ queues: ["send-invoice-email"] });
    expect(counts[0]?.counts.queued).to.equal(1);
  });

  it("rolls back a job enqueued before a later failure in the same transaction", async () => {
    const client = new JobClient(app.store);
    const failure = new Error("the billing ledger refused the invoice");
    const thrown = await app.db
      .transaction()
      .execute(async (trx) => {
        await client.enqueue(SendInvoiceEmail, { invoiceId: 9 }, { transaction: trx });
        throw failure;
      })
      .catch((error: unknown) => error);
    expect(thrown).to.equal(failure);
    const counts = await app.store.countByQueue({ queues: ["send-invoice-email"] });
    expect(counts[0]?.counts.queued).to.equal(0);
  });
});
