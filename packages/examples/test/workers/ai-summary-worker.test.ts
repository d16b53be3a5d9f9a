import { expect } from "chai";
import { ErrorCode, JobClient } from "@stint/core";
import { drainQueues } from "../../src/demo/drain-queues";
import { AiSummary } from "../../src/jobs/ai-summary";
import { FakeLlmClient } from "../../src/services/fake-llm-client";
import { LlmRateLimitError, type Completion, type CompletionRequest, type LlmClient } from "../../src/services/llm-client";
import { AiSummaryWorker, MAX_DOCUMENT_CHARS } from "../../src/workers/ai-summary-worker";
import { createAppFixture, FAST_BACKOFF, jobRow, writtenWithSql, type AppFixture } from "../support/app-fixture";

/** A model API that answers with a script, and remembers what it saw. */
class ScriptedLlm implements LlmClient {
  readonly signals: AbortSignal[] = [];
  #calls = 0;

  constructor(private readonly answer: (call: number, signal: AbortSignal) => Promise<Completion>) {}

  get calls(): number {
    return this.#calls;
  }

  complete(_request: CompletionRequest, options: { readonly signal?: AbortSignal } = {}): Promise<Completion> {
    this.#calls += 1;
    const signal = options.signal ?? new AbortController().signal;
    this.signals.push(signal);
    return this.answer(this.#calls, signal);
  }
}

describe("AiSummaryWorker", () => {
  let app: AppFixture;
  let client: JobClient;

  beforeEach(async () => {
    app = await createAppFixture();
    client = new JobClient(app.store);
    await app.db
      .insertInto("documents")
      .values(
        Array.from({ length: 16 }, (_, index) => ({ id: index + 1, title: `Document ${index + 1}`, body: "Stint keeps jobs in PostgreSQL. ".repeat(20) })),
      )
      .execute();
  });
  afterEach(async () => {
    await app.drop();
  });

  it("summarises several documents in parallel and stores the summaries", async () => {
    const llm = new FakeLlmClient({ latencyMs: { min: 40, max: 60 } });
    await client.enqueueMany(
      AiSummary,
      Array.from({ length: 16 }, (_, index) => ({ payload: { documentId: index + 1, maxWords: 5 } })),
    );

    const summary = await new AiSummaryWorker(app.store, app.log, app.db, llm, FAST_BACKOFF).start();

    expect(summary).to.include({ claimed: 16, succeeded: 16, dead: 0 });
    expect(llm.maxInFlight).to.be.greaterThan(1);
    expect(llm.maxInFlight).to.be.at.most(8);
    const stored = await app.db.selectFrom("document_summaries").select(["document_id", "summary", "model"]).orderBy("document_id").execute();
    expect(stored).to.have.length(16);
    expect(stored[0]).to.deep.equal({ document_id: 1, summary: "Stint keeps jobs in PostgreSQL. …", model: FakeLlmClient.MODEL });
  });

  it("waits as long as a 429 asks before the next attempt", async () => {
    const llm = new ScriptedLlm(async (call) => {
      if (call === 1) throw new LlmRateLimitError(150);
      return { text: "A short summary.", model: "scripted" };
    });
    const { id } = await client.enqueue(AiSummary, { documentId: 1 });

    const result = await drainQueues([new AiSummaryWorker(app.store, app.log, app.db, llm, FAST_BACKOFF)], app.store, { deadlineMs: 10_000, pollMs: 10 });

    expect(result.drained).to.equal(true);
    const job = await jobRow(app.store, id);
    expect(job).to.include({ state: "succeeded", attempts: 2 });
    expect(job.lastError).to.contain("rate limited by the model API (429)");
    expect(job.finishedAt!.getTime() - job.createdAt.getTime()).to.be.at.least(150);
  });

  it("sends a document that is too long to dead without calling the model", async () => {
    await app.db
      .insertInto("documents")
      .values({ id: 99, title: "Huge", body: "x".repeat(MAX_DOCUMENT_CHARS + 1) })
      .execute();
    const llm = new FakeLlmClient();
    const { id } = await client.enqueue(AiSummary, { documentId: 99 });

    const summary = await new AiSummaryWorker(app.store, app.log, app.db, llm, FAST_BACKOFF).start();

    expect(summary).to.include({ dead: 1, retried: 0 });
    const job = await jobRow(app.store, id);
    expect(job).to.include({ state: "dead", attempts: 1, errorCode: ErrorCode.Permanent });
    expect(job.lastError).to.contain(`document 99 is too long to summarise (${MAX_DOCUMENT_CHARS + 1} characters, limit ${MAX_DOCUMENT_CHARS})`);
    expect(llm.calls).to.equal(0);
  });

  it("passes its signal to the model call, which stops at the job's timeout", async () => {
    const llm = new ScriptedLlm(
      (_call, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        }),
    );
    const { id } = await client.enqueue(AiSummary, { documentId: 1 }, { timeoutMs: 50, maxAttempts: 1 });

    await new AiSummaryWorker(app.store, app.log, app.db, llm, FAST_BACKOFF).start();

    expect(llm.signals).to.have.length(1);
    expect(llm.signals[0]!.aborted).to.equal(true);
    const job = await jobRow(app.store, id);
    expect(job).to.include({ state: "dead", errorCode: ErrorCode.Timeout });
  });

  it("sends a malformed payload written with SQL to dead, naming the field", async () => {
    const id = await writtenWithSql(app, AiSummary, { documentId: null });
    const llm = new FakeLlmClient();

    await new AiSummaryWorker(app.store, app.log, app.db, llm, FAST_BACKOFF).start();

    const job = await jobRow(app.store, id);
    expect(job).to.include({ state: "dead", errorCode: ErrorCode.Parse });
    expect(job.lastError).to.contain("payload.documentId: Invalid input: expected number, received null");
    expect(llm.calls).to.equal(0);
  });
});
