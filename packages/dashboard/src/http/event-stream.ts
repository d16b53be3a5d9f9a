import type { IncomingMessage, ServerResponse } from "node:http";
import type { JobEvent, JobEventGap, JobEventSource, JobEventSubscription, Logger } from "@stint/core";
import { badParameter, DashboardErrorCode, RequestRefused } from "./request-refused";

/** A comment line this often keeps proxies from closing an idle stream, and finds a client that left. */
export const HEARTBEAT_MS = 15_000;
/** Open streams per dashboard; the next one gets a 503 and its page polls instead. */
export const MAX_EVENT_STREAMS = 200;
/** Queues one stream may name. */
export const MAX_STREAM_QUEUES = 50;
/** How long a browser waits before it reconnects a stream that ended, sent as `retry:`. */
const RECONNECT_MS = 5_000;

/** What a stream was asked for: `queues=a,b` (all queues when left out) and `job=812` (that job only). */
export interface StreamFilter {
  readonly queues?: readonly string[];
  readonly jobId?: string;
}

/**
 * Reads the query of `GET <base>/events`: `queues`, comma-separated (at
 * most {@link MAX_STREAM_QUEUES}), and `job`, a job id. A 400 names a
 * malformed one.
 *
 * @example
 * ```ts
 * parseStreamFilter(new URLSearchParams("queues=emails,reports&job=812")); // { queues: ["emails", "reports"], jobId: "812" }
 * ```
 */
export function parseStreamFilter(query: URLSearchParams): StreamFilter {
  const filter: { queues?: readonly string[]; jobId?: string } = {};
  const queues = query.get("queues");
  if (queues !== null && queues !== "") {
    const names = [...new Set(queues.split(","))];
    // eslint-disable-next-line no-control-regex
    if (names.length > MAX_STREAM_QUEUES || names.some((name) => name === "" || name.length > 200 || /[\u0000-\u001f\u007f]/.test(name))) {
      throw badParameter("queues", `must be at most ${MAX_STREAM_QUEUES} queue names separated by commas`);
    }
    filter.queues = names;
  }
  const job = query.get("job");
  if (job !== null && job !== "") {
    if (!/^[1-9][0-9]{0,18}$/.test(job)) throw badParameter("job", "must be a job id");
    filter.jobId = job;
  }
  return filter;
}

/**
 * Serves `text/event-stream` from a {@link JobEventSource}: each job event
 * as `event: job` with `{ type, jobId, queue, attempt, at }`, each gap as
 * `event: gap` with `{ reason }` (the page re-reads what it shows), a
 * heartbeat comment every {@link HEARTBEAT_MS}, and nothing more; the
 * subscription closes when the client goes. At most
 * {@link MAX_EVENT_STREAMS} at once.
 *
 * @example
 * ```ts
 * const streams = new EventStreams(events, log);
 * await streams.open(request, response, { queues: ["emails"] });
 * ```
 */
export class EventStreams {
  readonly #source: JobEventSource;
  readonly #log: Logger;
  #open = 0;

  constructor(source: JobEventSource, log: Logger) {
    this.#source = source;
    this.#log = log;
  }

  /** Streams open now. */
  get openStreams(): number {
    return this.#open;
  }

  /**
   * Answers one stream request; resolves once the stream is set up (not
   * when it ends). `signedIn` is asked at every heartbeat: the stream ends
   * once the viewer's sign-in has ended.
   */
  async open(request: IncomingMessage, response: ServerResponse, filter: StreamFilter, signedIn: () => boolean = () => true): Promise<void> {
    if (this.#open >= MAX_EVENT_STREAMS) {
      throw new RequestRefused(DashboardErrorCode.Unavailable, "Too many live pages are open; this one refreshes itself instead.");
    }
    this.#open += 1;
    let closed = false;
    let subscription: JobEventSubscription | undefined;
    const timer: { heartbeat?: NodeJS.Timeout } = {};
    const end = (): void => {
      if (closed) return;
      closed = true;
      this.#open -= 1;
      if (timer.heartbeat !== undefined) clearInterval(timer.heartbeat);
      void subscription?.close().catch((error: unknown) => this.#log.warn("Dashboard: closing an event stream's subscription failed", { error }));
      if (!response.writableEnded) response.end();
    };
    request.on("close", end);
    response.on("close", end);
    const send = (text: string): void => {
      if (!closed) response.write(text);
    };
    try {
      subscription = await this.#source.subscribe(filter.queues === undefined ? {} : { queues: filter.queues }, {
        onEvent: (event) => {
          if (filter.jobId === undefined || event.jobId === filter.jobId) send(message("job", describeEvent(event)));
        },
        onGap: (gap) => send(message("gap", describeGap(gap))),
      });
    } catch (thrown) {
      end();
      throw thrown;
    }
    if (closed) {
      await subscription.close();
      return;
    }
    response.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy": "default-src 'none'",
      "X-Content-Type-Options": "nosniff",
      "X-Accel-Buffering": "no",
    });
    send(`retry: ${RECONNECT_MS}\n${message("ready", {})}`);
    timer.heartbeat = setInterval(() => (signedIn() ? send(": heartbeat\n\n") : end()), HEARTBEAT_MS);
    timer.heartbeat.unref();
  }
}

function message(event: string, data: object): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function describeEvent(event: JobEvent): object {
  return { type: event.type, jobId: event.jobId, queue: event.queue, attempt: event.attempt, at: event.at.toISOString() };
}

/** The reason only: an `unavailable` gap's error stays in the server's log, not the page. */
function describeGap(gap: JobEventGap): object {
  return gap.reason === "summarised" ? { reason: gap.reason, queue: gap.queue, type: gap.type } : { reason: gap.reason };
}
