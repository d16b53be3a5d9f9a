import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { AbstractQueueWorker, defineJob, JobClient, createSilentLogger, type JobContext } from "@stint/core";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { expect } from "chai";
import { startTracing, type Tracing } from "../../src/observe/tracing";

const Ping = defineJob<{ n: number }>("traced-ping", { maxAttempts: 3 });

/** Fails the first attempt of each job when `failFirst`, and notes the trace its handler ran in. */
class PingWorker extends AbstractQueueWorker<{ n: number }> {
  readonly job = Ping;
  readonly handlerTraces: string[] = [];

  constructor(
    test: TestSchema,
    private readonly failFirst = false,
  ) {
    super(test.store, createSilentLogger(), { backoff: { baseMs: 0, maxMs: 0, jitter: 0 } });
  }
  protected parse(payload: unknown): { n: number } {
    return payload as { n: number };
  }
  protected async processItem(_item: { n: number }, ctx: JobContext): Promise<void> {
    this.handlerTraces.push(trace.getActiveSpan()?.spanContext().traceId ?? "none");
    if (this.failFirst && ctx.job.attempt === 1) throw new Error("upstream answered 503");
  }
}

describe("startTracing, with stint on a real database", () => {
  let test: TestSchema;
  let tracing: Tracing;
  const spans = () => (tracing.exporter as InMemorySpanExporter).getFinishedSpans();

  beforeEach(async () => {
    test = await createTestSchema();
    tracing = startTracing();
  });
  afterEach(async () => {
    await tracing.shutdown();
    await test.drop();
  });

  it("puts an enqueue made in a request's span and every attempt of the job, retries included, in one trace", async () => {
    const client = new JobClient(test.store);
    const { id, traceId } = await trace.getTracer("web").startActiveSpan("POST /ping", async (request) => {
      const enqueued = await client.enqueue(Ping, { n: 1 }, { meta: { tenant: "acme" } });
      request.end();
      return { id: enqueued.id, traceId: request.spanContext().traceId };
    });
    const stored = await test.store.getJob({ id });
    expect(stored?.meta).to.include({ tenant: "acme" });
    expect(stored?.meta?.["traceparent"]).to.match(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    const worker = new PingWorker(test, true);
    expect(await worker.start()).to.include({ succeeded: 1, retried: 1 });

    const producer = spans().find((span) => span.kind === SpanKind.PRODUCER);
    const attempts = spans().filter((span) => span.kind === SpanKind.CONSUMER);
    expect(producer?.name).to.equal("send traced-ping");
    expect(producer?.spanContext().traceId).to.equal(traceId);
    expect(producer?.attributes).to.include({ "messaging.system": "stint", "messaging.destination.name": "traced-ping", "messaging.message.id": id });
    expect(attempts.map((span) => span.attributes["stint.job.attempt"])).to.deep.equal([1, 2]);
    for (const span of attempts) {
      expect(span.name).to.equal("process traced-ping");
      expect(span.spanContext().traceId).to.equal(traceId);
      expect(span.parentSpanContext?.spanId).to.equal(producer?.spanContext().spanId);
      expect(span.attributes).to.include({ "messaging.operation.type": "process", "messaging.destination.name": "traced-ping", "messaging.message.id": id });
    }
    expect(attempts[0]?.status.code).to.equal(SpanStatusCode.ERROR);
    expect(attempts[0]?.attributes["stint.job.outcome"]).to.equal("retry");
    expect(attempts[0]?.events.map((event) => event.name)).to.deep.equal(["exception"]);
    expect(attempts[1]?.status.code).to.equal(SpanStatusCode.OK);
    expect(worker.handlerTraces, "each handler runs inside its attempt's span").to.deep.equal([traceId, traceId]);
  });

  it("puts a batch under one producer span that carries its size", async () => {
    await new JobClient(test.store).enqueueMany(Ping, [{ payload: { n: 1 } }, { payload: { n: 2 } }, { payload: { n: 3 } }]);
    const [producer] = spans();
    expect(producer?.attributes).to.include({ "messaging.batch.message_count": 3 });
    const jobs = await test.store.listJobs({ queue: "traced-ping", limit: 10 });
    const parents = new Set(jobs.map((job) => job.meta?.["traceparent"]));
    expect([...parents]).to.deep.equal([`00-${producer?.spanContext().traceId}-${producer?.spanContext().spanId}-01`]);
  });
});
