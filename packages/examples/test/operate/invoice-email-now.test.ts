import { expect } from "chai";
import { JobClient } from "@stint/core";
import type { JobCompletionSource } from "@stint/core/driver";
import { PostgresCompletionSource, PostgresJobStore } from "@stint/postgres-driver";
import { SendInvoiceEmail } from "../../src/jobs/send-invoice-email";
import { describeInvoiceEmail, emailInvoiceNow } from "../../src/operate/invoice-email-now";
import { RecordingMailer } from "../../src/services/recording-mailer";
import { SendInvoiceEmailWorker } from "../../src/workers/send-invoice-email-worker";
import { createAppFixture, FAST_BACKOFF, insertInvoices, type AppFixture } from "../support/app-fixture";

describe("waiting for an invoice e-mail's outcome (client.waitFor)", () => {
  let app: AppFixture;
  let completions: PostgresCompletionSource;
  let client: JobClient;
  /** Resolves once somebody waits for a job (its watch is in place), so the worker's finish is heard. */
  let someoneWaits: Promise<void>;

  beforeEach(async () => {
    app = await createAppFixture();
    completions = new PostgresCompletionSource({ connectionString: app.test.connectionString, schema: app.test.schema });
    let announce!: () => void;
    someoneWaits = new Promise((resolve) => (announce = resolve));
    const announcing: JobCompletionSource = {
      watch: async (jobId, onHint) => {
        const watch = await completions.watch(jobId, onHint);
        announce();
        return watch;
      },
    };
    client = new JobClient(new PostgresJobStore({ db: app.test.db, schema: app.test.schema, completions: announcing }));
  });
  afterEach(async () => {
    await completions.close();
    await app.drop();
  });

  function worker(): SendInvoiceEmailWorker {
    return new SendInvoiceEmailWorker(app.store, app.log, app.db, app.test.schema, new RecordingMailer(app.db), FAST_BACKOFF);
  }

  it("resolves with the typed result once a worker has sent the e-mail", async () => {
    await insertInvoices(app.db, [812]);
    const outcome = emailInvoiceNow(client, 812);
    await someoneWaits;
    await worker().start();
    const { invoiceId, sent, messageId } = await outcome;
    expect({ invoiceId, sent }).to.deep.equal({ invoiceId: 812, sent: true });
    expect(messageId).to.match(/^sent-email-\d+$/);
  });

  it("says why an e-mail was not sent when its job is dead", async () => {
    const { id } = await client.enqueue(SendInvoiceEmail, { invoiceId: 404 });
    const sentence = describeInvoiceEmail(client, id);
    await someoneWaits;
    await worker().start();
    expect(await sentence).to.equal("not sent: the job is dead after 1 attempts (STINT_PERMANENT)");
  });
});
