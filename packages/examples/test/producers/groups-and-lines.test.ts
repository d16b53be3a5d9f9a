import { expect } from "chai";
import { JobClient, QueueAdmin } from "@stint/core";
import { InMemoryJobStore } from "@stint/core/testing";
import { capSummariesPerTenant, summariseForTenant } from "../../src/producers/summarise-for-tenant";
import { emailInvoicesInOrder } from "../../src/producers/email-invoices-in-order";

describe("producers with groups and serial keys", () => {
  it("puts a tenant's summaries in the tenant's group, under a cap of two per tenant", async () => {
    const store = new InMemoryJobStore();
    await capSummariesPerTenant(new QueueAdmin(store));
    await summariseForTenant(new JobClient(store), "acme", [7, 8, 9]);
    await summariseForTenant(new JobClient(store), "globex", [10]);
    const claimed = await store.claimBatch({ queue: "ai-summary", workerId: "w", limit: 10, leaseMs: 60_000 });
    const tenants = await Promise.all(claimed.map(async (job) => (await store.getJob({ id: job.id }))?.group));
    expect(tenants.sort()).to.deep.equal(["tenant:acme", "tenant:acme", "tenant:globex"]);
  });

  it("sends a customer's invoice e-mails one at a time, in order", async () => {
    const store = new InMemoryJobStore();
    await emailInvoicesInOrder(new JobClient(store), "ada@example.com", [812, 813]);
    const first = await store.claimBatch({ queue: "send-invoice-email", workerId: "w", limit: 10, leaseMs: 60_000 });
    expect(first.map((job) => job.payload)).to.deep.equal([{ invoiceId: 812 }]);
    await store.completeJobs({ workerId: "w", jobs: first.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: null, durationMs: 1 })) });
    const second = await store.claimBatch({ queue: "send-invoice-email", workerId: "w", limit: 10, leaseMs: 60_000 });
    expect(second.map((job) => job.payload)).to.deep.equal([{ invoiceId: 813 }]);
  });
});
