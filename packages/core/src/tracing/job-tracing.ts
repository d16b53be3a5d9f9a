import {
  context,
  propagation,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from "@opentelemetry/api";

/** The instrumentation scope of every span stint starts. */
export const TRACER_NAME = "@stint/core";

/** `messaging.system` of stint's spans. */
export const MESSAGING_SYSTEM = "stint";

/** Keys of the W3C trace context that enqueue writes into a job's `meta`. */
export const TRACE_CONTEXT_KEYS: readonly string[] = Object.freeze(["traceparent", "tracestate"]);

/** What a span needs to know about a job. */
export interface TracedJob {
  readonly id: string;
  readonly queue: string;
  readonly attempt: number;
  /** The job's meta, where enqueue put the producer's trace context. */
  readonly meta?: Readonly<Record<string, unknown>> | null;
}

/**
 * Runs `send` (an enqueue of `count` jobs of `queue`) in a producer span
 * `send <queue>`. `send` receives `withContext`, which writes that span's
 * W3C trace context over a job's meta; store what it returns with each job.
 * Without an OpenTelemetry SDK the span does nothing and `withContext`
 * returns the meta it is given, unchanged.
 *
 * @example
 * ```ts
 * const result = await traceEnqueue("send-invoice", 1, (withContext) =>
 *   store.enqueue(buildNewJob(SendInvoice, payload, { meta: withContext(options.meta) })),
 * );
 * ```
 */
export function traceEnqueue<R>(
  queue: string,
  count: number,
  send: (withContext: <M extends Readonly<Record<string, unknown>>>(meta: M | undefined) => M | undefined) => Promise<R>,
): Promise<R> {
  // Without an SDK, and outside any trace, there is nothing to record and no context to hand on: the enqueue skips the
  // span (a cost on every enqueue before its insert is sent: see docs/benchmarks.md, Figures behind the code), and the
  // promise of its own.
  return tracingIsOn() ? sendInSpan(queue, count, send) : send(unchangedMeta);
}

async function sendInSpan<R>(
  queue: string,
  count: number,
  send: (withContext: <M extends Readonly<Record<string, unknown>>>(meta: M | undefined) => M | undefined) => Promise<R>,
): Promise<R> {
  const span = trace.getTracer(TRACER_NAME).startSpan(`send ${queue}`, {
    kind: SpanKind.PRODUCER,
    attributes: {
      "messaging.system": MESSAGING_SYSTEM,
      "messaging.operation.type": "send",
      "messaging.operation.name": "send",
      "messaging.destination.name": queue,
      ...(count === 1 ? {} : { "messaging.batch.message_count": count }),
    },
  });
  const active = trace.setSpan(context.active(), span);
  try {
    const result = await context.with(active, () => send((meta) => withTraceContext(meta, active)));
    if (count === 1 && isEnqueueResult(result)) span.setAttribute("messaging.message.id", result.id);
    return result;
  } catch (thrown) {
    recordFailure(span, thrown);
    throw thrown;
  } finally {
    span.end();
  }
}

/** The `withContext` of an enqueue outside any trace: the meta as given. */
function unchangedMeta<M>(meta: M | undefined): M | undefined {
  return meta;
}

/** The tracer provider of the API when no SDK registered one. */
// eslint-disable-next-line @typescript-eslint/no-deprecated -- the API offers no other way to tell its no-op provider from an SDK's
const NO_SDK = new ProxyTracerProvider().getDelegate();

/**
 * Where `@opentelemetry/api` 1.x keeps what was registered globally (a
 * tracer provider under `trace`, a context manager under `context`). Read
 * directly, it answers "nothing registered" with one property lookup; the
 * tracing tests register an SDK, so a change of this key fails them.
 */
const OTEL_GLOBALS = Symbol.for("opentelemetry.js.api.1");

/**
 * Whether an SDK registered a tracer provider, or a span (of whatever
 * origin) is active. With neither a tracer provider nor a context manager
 * registered, no span can be recording or active: the enqueue and the
 * attempt skip their no-op spans.
 *
 * @example
 * ```ts
 * if (tracingIsOn()) span = startAttemptSpan(job);
 * ```
 */
export function tracingIsOn(): boolean {
  const registered = (globalThis as Record<symbol, { readonly trace?: unknown; readonly context?: unknown } | undefined>)[OTEL_GLOBALS];
  if (registered?.trace === undefined && registered?.context === undefined) return false;
  const provider = trace.getTracerProvider();
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- as above, for NO_SDK
  return !(provider instanceof ProxyTracerProvider && provider.getDelegate() === NO_SDK) || trace.getActiveSpan() !== undefined;
}

/**
 * `meta` with the active context's trace context (`traceparent`,
 * `tracestate`) written over it; `meta` itself when there is none to write.
 *
 * @example
 * ```ts
 * withTraceContext({ tenant: "acme" }); // { tenant: "acme", traceparent: "00-4bf9…-00f0…-01" } inside a span
 * ```
 */
export function withTraceContext<M extends Readonly<Record<string, unknown>>>(meta: M | undefined, active: Context = context.active()): M | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  if (Object.keys(carrier).length === 0) return meta;
  return { ...meta, ...carrier } as unknown as M;
}

/**
 * Starts the consumer span `process <queue>` of one attempt, as a child of
 * the producer's span when the job's meta carries its trace context (so
 * every attempt of a job, retries included, lands in the trace that
 * enqueued it), and returns it with the context to run the handler in.
 *
 * @example
 * ```ts
 * const { span, active } = startAttemptSpan(job);
 * try { await context.with(active, () => handler()); endAttemptSpan(span, undefined); } catch (e) { endAttemptSpan(span, e); }
 * ```
 */
export function startAttemptSpan(job: TracedJob): { readonly span: Span; readonly active: Context } {
  const parent = job.meta ? propagation.extract(ROOT_CONTEXT, carrierOf(job.meta)) : ROOT_CONTEXT;
  const attributes: Attributes = {
    "messaging.system": MESSAGING_SYSTEM,
    "messaging.operation.type": "process",
    "messaging.operation.name": "process",
    "messaging.destination.name": job.queue,
    "messaging.message.id": job.id,
    "stint.job.attempt": job.attempt,
  };
  const span = trace.getTracer(TRACER_NAME).startSpan(`process ${job.queue}`, { kind: SpanKind.CONSUMER, attributes }, parent);
  return { span, active: trace.setSpan(parent, span) };
}

/**
 * Ends an attempt's span: status OK, or ERROR with the exception recorded
 * when `error` is given; `outcome` (succeeded, retry, dead, …) is kept as
 * `stint.job.outcome`.
 */
export function endAttemptSpan(span: Span, outcome: string, error?: unknown): void {
  span.setAttribute("stint.job.outcome", outcome);
  if (error === undefined) span.setStatus({ code: SpanStatusCode.OK });
  else recordFailure(span, error);
  span.end();
}

function recordFailure(span: Span, thrown: unknown): void {
  const error = thrown instanceof Error ? thrown : new Error(String(thrown));
  span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
}

function carrierOf(meta: Readonly<Record<string, unknown>>): Record<string, string> {
  const carrier: Record<string, string> = {};
  for (const key of TRACE_CONTEXT_KEYS) {
    const value = meta[key];
    if (typeof value === "string") carrier[key] = value;
  }
  return carrier;
}

function isEnqueueResult(value: unknown): value is { readonly id: string } {
  return typeof value === "object" && value !== null && typeof (value as { id?: unknown }).id === "string";
}
