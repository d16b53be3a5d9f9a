import { expect } from "chai";
import { createSilentLogger, ErrorCode, JobClient, permanent } from "@stint/core";
import { InMemoryJobStore, runBatch } from "@stint/core/testing";
import { SendNewsletter } from "../../src/jobs/send-newsletter";
import type { BulkMailer, BulkSendAnswer } from "../../src/services/bulk-mailer";
import type { OutgoingMail } from "../../src/services/mailer";
import { MailServiceUnavailableError } from "../../src/services/flaky-mailer";
import { SendNewsletterWorker } from "../../src/workers/send-newsletter-worker";
import { createAppFixture, type AppFixture } from "../support/app-fixture";

/** A bulk endpoint that refuses the addresses it is told to and accepts the rest, remembering each request's size. */
class ScriptedBulkMailer implements BulkMailer {
  readonly requests: number[] = [];

  constructor(private readonly refuse: Readonly<Record<string, Error>> = {}) {}

  async sendMany(mails: readonly OutgoingMail[]): Promise<readonly BulkSendAnswer[]> {
    this.requests.push(mails.length);
    return mails.map((mail, index) =>
      this.refuse[mail.to] === undefined
        ? { ok: true, receipt: { messageId: `m-${this.requests.length}-${index}` } }
        : { ok: false, error: this.refuse[mail.to]! },
    );
  }
}

describe("SendNewsletterWorker", () => {
  it("sends a batch in one request, and each mail the provider refused fails alone", async () => {
    const mailer = new ScriptedBulkMailer({
      "gone@example.com": permanent(new Error("mailbox does not exist")),
      "busy@example.com": new MailServiceUnavailableError("try later"),
    });
    const worker = new SendNewsletterWorker(new InMemoryJobStore(), createSilentLogger(), mailer);
    const results = await runBatch(worker, [
      { issue: 42, to: "ada@example.com" },
      { issue: 42, to: "gone@example.com" },
      { issue: 42, to: "busy@example.com" },
      { issue: 42, to: "not an address" },
    ]);
    expect(mailer.requests, "one request for the three payloads that passed the schema").to.deep.equal([3]);
    expect(results.map((result) => result.status)).to.deep.equal(["succeeded", "dead", "retry", "dead"]);
    expect(results[0]).to.nested.include({ "result.messageId": "m-1-0" });
    expect(results[1]!.job.errorCode).to.equal(ErrorCode.Permanent);
    expect(results[3]!.job.errorCode).to.equal(ErrorCode.Parse);
  });

  describe("on PostgreSQL", () => {
    let app: AppFixture;
    beforeEach(async () => {
      app = await createAppFixture();
    });
    afterEach(async () => {
      await app.drop();
    });

    it("drains 250 subscribers in requests of at most 100", async () => {
      const mailer = new ScriptedBulkMailer();
      const payloads = Array.from({ length: 250 }, (_, index) => ({ payload: { issue: 7, to: `reader${index}@example.com` } }));
      await new JobClient(app.store).enqueueMany(SendNewsletter, payloads);
      const summary = await new SendNewsletterWorker(app.store, app.log, mailer).start();
      expect(summary).to.include({ claimed: 250, succeeded: 250 });
      expect(mailer.requests.reduce((sum, size) => sum + size, 0)).to.equal(250);
      expect(Math.max(...mailer.requests)).to.be.at.most(100);
    });
  });
});
