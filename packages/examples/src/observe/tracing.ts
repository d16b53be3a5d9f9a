import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";

/** The tracing of a process, as set up by {@link startTracing}. */
export interface Tracing {
  /** Where finished spans went (an in-memory exporter unless another was given). */
  readonly exporter: SpanExporter;
  /** Flushes and stops the provider, and removes the global registrations. */
  shutdown(): Promise<void>;
}

/**
 * Registers an OpenTelemetry SDK for the whole process: a tracer provider
 * that hands every finished span to `exporter`, a context manager that
 * follows `await`, and the W3C trace-context propagator. stint needs
 * nothing more: `JobClient.enqueue` then opens a `send <queue>` span and
 * stores its trace context in the job's `meta`, and each attempt runs in a
 * `process <queue>` span under it, on whichever worker claims it. In
 * production, pass an OTLP exporter (or use `@opentelemetry/sdk-node`).
 *
 * @example
 * ```ts
 * const tracing = startTracing();
 * await trace.getTracer("web").startActiveSpan("POST /invoices", async (span) => {
 *   await client.enqueue(SendInvoiceEmail, { invoiceId: 812, to: "ap@example.com" });
 *   span.end();
 * });
 * ```
 */
export function startTracing(exporter: SpanExporter = new InMemorySpanExporter()): Tracing {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    exporter,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
