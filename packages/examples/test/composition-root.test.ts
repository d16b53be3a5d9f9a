import { expect } from "chai";
import { createSilentLogger, JOB_STORE, resolveWorker, resolveWorkers } from "@stint/core";
import { WORKERS } from "@stint/core/internal";
import { POSTGRES_DB } from "@stint/postgres-driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { container as rootContainer } from "tsyringe";
import { APP_DB, APP_SCHEMA, LLM_CLIENT, MAILER, RETRY_BACKOFF } from "../src/app-tokens";
import { createCompositionRoot, EXAMPLE_WORKERS } from "../src/composition-root";
import { FakeLlmClient } from "../src/services/fake-llm-client";
import { RecordingMailer } from "../src/services/recording-mailer";
import { AiSummaryWorker } from "../src/workers/ai-summary-worker";
import { NightlyCleanupWorker } from "../src/workers/nightly-cleanup-worker";
import { SendInvoiceEmailWorker } from "../src/workers/send-invoice-email-worker";
import { SendReportEmailWorker } from "../src/workers/send-report-email-worker";
import { WeeklyReportWorker } from "../src/workers/weekly-report-worker";
import { MonthEndCustomersWorker } from "../src/workers/month-end-customers-worker";
import { MonthEndInvoiceWorker } from "../src/workers/month-end-invoice-worker";
import { MonthEndReportWorker } from "../src/workers/month-end-report-worker";

describe("the composition root", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema();
  });
  afterEach(async () => {
    await test.drop();
  });

  function compose() {
    return createCompositionRoot({ connectionString: test.connectionString, schema: test.schema, logger: { logger: createSilentLogger() } });
  }

  it("resolves every worker by its queue name", async () => {
    const app = compose();
    try {
      const expected = {
        "send-invoice-email": SendInvoiceEmailWorker,
        "send-report-email": SendReportEmailWorker,
        "weekly-report": WeeklyReportWorker,
        "nightly-cleanup": NightlyCleanupWorker,
        "ai-summary": AiSummaryWorker,
        "month-end-customers": MonthEndCustomersWorker,
        "month-end-invoice": MonthEndInvoiceWorker,
        "month-end-report": MonthEndReportWorker,
      };
      for (const [queue, workerClass] of Object.entries(expected)) {
        const worker = resolveWorker(app.container, queue);
        expect(worker).to.be.instanceOf(workerClass);
        expect(worker.queue).to.equal(queue);
      }
      expect(resolveWorkers(app.container).map((worker) => worker.queue)).to.have.members(Object.keys(expected));
      expect(EXAMPLE_WORKERS).to.have.length(Object.keys(expected).length);
    } finally {
      await app.close();
    }
  });

  it("registers the store, the database and the app's services under their tokens", async () => {
    const app = compose();
    try {
      expect(app.container.resolve(JOB_STORE)).to.equal(app.container.resolve(JOB_STORE));
      expect(app.container.resolve(MAILER)).to.be.instanceOf(RecordingMailer);
      expect(app.container.resolve(LLM_CLIENT)).to.be.instanceOf(FakeLlmClient);
      expect(app.container.resolve(RETRY_BACKOFF)).to.deep.equal({});
      expect(app.container.isRegistered(APP_DB)).to.equal(true);
      expect(app.container.resolve(APP_SCHEMA)).to.equal(test.schema);
      expect(app.container.isRegistered(POSTGRES_DB)).to.equal(true);
      const worker = resolveWorker(app.container, "ai-summary");
      expect(worker.options.concurrency).to.equal(8);
    } finally {
      await app.close();
    }
  });

  it("keeps its registrations in a child container of its own", async () => {
    const first = compose();
    const second = compose();
    try {
      expect(first.container).to.not.equal(second.container);
      expect(first.container.resolve(JOB_STORE)).to.not.equal(second.container.resolve(JOB_STORE));
      expect(rootContainer.isRegistered(WORKERS)).to.equal(false);
      expect(rootContainer.isRegistered(JOB_STORE)).to.equal(false);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("closes idempotently", async () => {
    const app = compose();
    await app.close();
    await app.close();
  });
});
