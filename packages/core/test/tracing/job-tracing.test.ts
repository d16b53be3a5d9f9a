import { context, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { expect } from "chai";
import { JobClient } from "../../src/client/job-client";
import { PermanentError } from "../../src/errors/job-errors";
import { defineJob } from "../../src/job/job-definition";
import type { NewWorkflow } from "../../src/store/workflow-store";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { WorkflowDefinitionError } from "../../src/workflow/workflow-errors";
import { step } from "../../src/workflow/workflow-step";
import { runBatch } from "../../src/testing/run-batch";
import { endAttemptSpan, startAttemptSpan, traceEnqueue, withTraceContext } from "../../src/tracing/job-tracing";
import { BatchTaskWorker } from "../support/batch-task-worker";

describe("job tracing", () => {
  describe("without an OpenTelemetry SDK", () => {
    it("leaves meta as it is and still runs the enqueue", async () => {
      const meta = { tenant: "acme" };
      expect(withTraceContext(meta)).to.equal(meta);
      expect(withTraceContext(undefined)).to.equal(undefined);
      const seen = await traceEnqueue("q", 1, async (withContext) => withContext(meta));
      expect(seen).to.equal(meta);
    });
  });

  describe("with the SDK and an in-memory exporter", () => {
    let exporter: InMemorySpanExporter;
    let provider: BasicTracerProvider;

    beforeEach(() => {
      exporter = new InMemorySpanExporter();
      provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
      trace.setGlobalTracerProvider(provider);
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    });
    afterEach(async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    });

    it("puts a producer span in the caller's trace and its context into the job's meta", async () => {
      const tracer = trace.getTracer("test");
      const meta = await tracer.startActiveSpan("request", async (request) => {
        try {
          return await traceEnqueue("send-invoice", 1, async (withContext) => ({ id: "812", carrier: withContext({ tenant: "acme" }) }));
        } finally {
          request.end();
        }
      });
      const [producer, request] = exporter.getFinishedSpans();
      expect(producer?.name).to.equal("send send-invoice");
      expect(producer?.kind).to.equal(SpanKind.PRODUCER);
      expect(producer?.parentSpanContext?.spanId).to.equal(request?.spanContext().spanId);
      expect(producer?.attributes).to.include({ "messaging.system": "stint", "messaging.destination.name": "send-invoice", "messaging.message.id": "812" });
      expect(meta.carrier).to.include({ tenant: "acme" });
      expect((meta.carrier as Record<string, unknown> | undefined)?.["traceparent"]).to.equal(
        `00-${producer?.spanContext().traceId}-${producer?.spanContext().spanId}-01`,
      );
    });

    it("runs every attempt of a job, retries included, as a consumer span under the producer", async () => {
      const enqueued = await traceEnqueue("send-invoice", 1, async (withContext) => ({ id: "812", carrier: withContext({}) }));
      const first = startAttemptSpan({ id: "812", queue: "send-invoice", attempt: 1, meta: enqueued.carrier ?? null });
      const inner = context.with(first.active, () => trace.getActiveSpan());
      expect(inner, "the handler runs inside the attempt's span").to.equal(first.span);
      endAttemptSpan(first.span, "retry", new Error("smtp timeout"));
      const second = startAttemptSpan({ id: "812", queue: "send-invoice", attempt: 2, meta: enqueued.carrier ?? null });
      endAttemptSpan(second.span, "succeeded");

      const spans = exporter.getFinishedSpans();
      const producer = spans.find((span) => span.kind === SpanKind.PRODUCER)!;
      const attempts = spans.filter((span) => span.kind === SpanKind.CONSUMER);
      expect(attempts.map((span) => span.attributes["stint.job.attempt"])).to.deep.equal([1, 2]);
      for (const span of attempts) {
        expect(span.name).to.equal("process send-invoice");
        expect(span.spanContext().traceId).to.equal(producer.spanContext().traceId);
        expect(span.parentSpanContext?.spanId).to.equal(producer.spanContext().spanId);
        expect(span.attributes).to.include({ "messaging.operation.type": "process", "messaging.message.id": "812" });
      }
      expect(attempts[0]?.status).to.deep.include({ code: SpanStatusCode.ERROR, message: "smtp timeout" });
      expect(attempts[0]?.events.map((event) => event.name)).to.deep.equal(["exception"]);
      expect(attempts[1]?.status.code).to.equal(SpanStatusCode.OK);
    });

    it("gives each job of a batch its own consumer span, ended with its own outcome", async () => {
      const worker = new BatchTaskWorker(
        new InMemoryJobStore(),
        async (entries, ctx) => {
          ctx.fail(entries[1]!, new PermanentError("refused"));
        },
        { batchSize: 3 },
      );
      await runBatch(worker, [{ n: 1 }, { n: 2 }, { n: "three" as unknown as number }]);
      const spans = exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.CONSUMER);
      expect(spans.map((span) => [span.attributes["messaging.message.id"], span.attributes["stint.job.outcome"]]).sort()).to.deep.equal([
        ["1", "succeeded"],
        ["2", "dead"],
        ["3", "dead"],
      ]);
    });

    it("writes the workflow's producer context into every step's meta, keeping the step's own meta and dead-letter queue", async () => {
      const Fetch = defineJob<{ folder: string }>("traced-fetch");
      const Summarise = defineJob<{ id: number }>("traced-summarise", { deadLetterQueue: "traced-dead" });
      const store = new InMemoryJobStore();
      const workflow = await trace.getTracer("test").startActiveSpan("request", async (request) => {
        try {
          return await new JobClient(store).enqueueWorkflow("digest", {
            fetch: step(Fetch, { folder: "inbox" }, { meta: { tenant: "acme" } }),
            summarise: [1, 2].map((id) => step(Summarise, { id }, { after: ["fetch"] })),
          });
        } finally {
          request.end();
        }
      });
      const producer = exporter.getFinishedSpans().find((span) => span.kind === SpanKind.PRODUCER)!;
      expect(producer.name).to.equal("send digest");
      expect(producer.attributes).to.include({ "messaging.batch.message_count": 3 });
      const traceparent = `00-${producer.spanContext().traceId}-${producer.spanContext().spanId}-01`;
      const metas = await Promise.all([workflow.steps.fetch, ...workflow.steps.summarise].map(async (job) => (await store.getJob({ id: job.id }))?.meta));
      expect(metas).to.deep.equal([
        { tenant: "acme", traceparent },
        { "stint.deadLetterQueue": "traced-dead", traceparent },
        { "stint.deadLetterQueue": "traced-dead", traceparent },
      ]);
    });

    it("refuses a bad workflow before its span starts, writing nothing", async () => {
      const Fetch = defineJob<{ folder: string }>("traced-fetch");
      const store = new (class extends InMemoryJobStore {
        readonly written: NewWorkflow[] = [];
        override enqueueWorkflow(workflow: NewWorkflow): ReturnType<InMemoryJobStore["enqueueWorkflow"]> {
          this.written.push(workflow);
          return super.enqueueWorkflow(workflow);
        }
      })();
      const refused = await new JobClient(store)
        .enqueueWorkflow("loop", { a: step(Fetch, { folder: "a" }, { after: ["b"] }), b: step(Fetch, { folder: "b" }, { after: ["a"] }) })
        .catch((thrown: unknown) => thrown);
      expect(refused).to.be.instanceOf(WorkflowDefinitionError);
      expect(store.written).to.deep.equal([]);
      expect(exporter.getFinishedSpans()).to.deep.equal([]);
      expect(await store.listWorkflows({ limit: 10 })).to.deep.equal([]);
    });

    it("starts a root span for a job enqueued outside any trace", () => {
      const { span } = startAttemptSpan({ id: "9", queue: "q", attempt: 1, meta: { tenant: "acme" } });
      endAttemptSpan(span, "succeeded");
      const [only] = exporter.getFinishedSpans();
      expect(only?.parentSpanContext).to.equal(undefined);
    });
  });
});
