import type { InjectionToken } from "tsyringe";
import { ConfigError } from "../errors/config-errors";
import { coerceError } from "../errors/coerce-error";

/** What every cross-process job event carries: ids and small fields only; read the job (`getJob`) for the rest. */
export interface JobEventFields {
  readonly jobId: string;
  readonly queue: string;
  /** The attempt the event is about: 0 for `enqueued`, the running attempt's number otherwise. */
  readonly attempt: number;
  /** When the statement that caused it ran, on the database's clock. */
  readonly at: Date;
}

/** The job was inserted (a dedupe hit on an active job inserts nothing and sends nothing). */
export interface JobEnqueuedChange extends JobEventFields {
  readonly type: "enqueued";
}

/** A worker claimed the job: attempt `attempt` runs now. */
export interface JobStartedChange extends JobEventFields {
  readonly type: "started";
}

/** The handler reported progress. `progress` is the value when its JSON is at most 256 bytes, else absent (read the job). */
export interface JobProgressChange extends JobEventFields {
  readonly type: "progress";
  readonly progress?: unknown;
}

/** The attempt succeeded and the job is finished. */
export interface JobSucceededChange extends JobEventFields {
  readonly type: "succeeded";
}

/** The attempt failed (or its lease ran out) and another attempt is scheduled. */
export interface JobFailedChange extends JobEventFields {
  readonly type: "failed";
  /** The failure's stable code (`STINT_WORKER_DIED` when its lease ran out), when known. */
  readonly errorCode?: string;
}

/** Why a job went back to waiting without a failure (see {@link JobRequeuedChange}). */
export type JobRequeueReason = "retry" | "run-now" | "snooze" | "release";

/**
 * The job waits to run again, and nothing failed: an operator retried it
 * (`retry`: `retryJob`, `retryDeadJobs`), made a waiting job due now
 * (`run-now`: `runJobNow`), its handler snoozed it (`snooze`), or a worker
 * gave it back unfinished when it shut down (`release`). `attempt` is the
 * job's latest attempt (0 when none ran); the next one is `attempt + 1`.
 * A failure that schedules another attempt sends `failed` instead.
 */
export interface JobRequeuedChange extends JobEventFields {
  readonly type: "requeued";
  readonly reason: JobRequeueReason;
}

/** The job gave up: no attempt follows. */
export interface JobDeadChange extends JobEventFields {
  readonly type: "dead";
  /** The last failure's stable code, when known. */
  readonly errorCode?: string;
}

/** An operator (or code) cancelled the job. */
export interface JobCancelledChange extends JobEventFields {
  readonly type: "cancelled";
}

/** The running attempt's handler wrote `ctx.log` lines; read them with `listJobLogs` (they are not in the event). */
export interface JobLogChange extends JobEventFields {
  readonly type: "log";
  /** How many lines this write added. */
  readonly lines?: number;
}

/**
 * A change of a job's state, seen from any process: a discriminated union
 * on `type`. Events of one statement arrive together, in the order of
 * their commit; events written inside a caller's transaction arrive when
 * it commits, and never when it rolls back.
 */
export type JobEvent =
  | JobEnqueuedChange
  | JobStartedChange
  | JobProgressChange
  | JobSucceededChange
  | JobFailedChange
  | JobRequeuedChange
  | JobDeadChange
  | JobCancelledChange
  | JobLogChange;

/** The `type` of a {@link JobEvent}. */
export type JobEventType = JobEvent["type"];

/**
 * Every {@link JobEventType}, in the order of a job's life. `requeued`
 * follows `failed`: both send a job back to waiting for its next `started`,
 * one after a failure and one without; both come before the ends a job
 * reaches when nothing sends it back (`dead`, `cancelled`).
 */
export const JOB_EVENT_TYPES: readonly JobEventType[] = Object.freeze([
  "enqueued",
  "started",
  "progress",
  "log",
  "succeeded",
  "failed",
  "requeued",
  "dead",
  "cancelled",
] satisfies JobEventType[]);

/**
 * Why a subscriber may have missed events; it should re-read what it shows.
 *
 * - `reconnected`: the listening connection was lost and is back (events
 *   in between are lost).
 * - `summarised`: one statement changed more jobs of `queue` than a
 *   notification lists (`count` of them, all `type`); read them instead.
 * - `unavailable`: notifications cannot arrive (the connection fails, or
 *   sits behind a transaction pooler); the subscriber should poll until a
 *   later `reconnected`.
 */
export type JobEventGap =
  | { readonly reason: "reconnected" }
  | { readonly reason: "summarised"; readonly type: JobEventType; readonly queue: string; readonly count: number }
  | { readonly reason: "unavailable"; readonly error: Error };

/** Which events a subscription wants. */
export interface JobEventFilter {
  /** Only these queues; all queues when left out. */
  readonly queues?: readonly string[];
  /** Only these types; all types when left out. */
  readonly types?: readonly JobEventType[];
}

/** What a subscription calls. Both are called synchronously and never awaited; what they throw is reported, never rethrown. */
export interface JobEventHandlers {
  readonly onEvent: (event: JobEvent) => void;
  /** Told whenever events may have been missed (see {@link JobEventGap}). */
  readonly onGap?: (gap: JobEventGap) => void;
}

/** One subscription; `close` ends it (idempotent). */
export interface JobEventSubscription {
  close(): Promise<void>;
}

/**
 * Job events from every process that uses the same database (or, in
 * memory, from this one). `subscribe` resolves once events are flowing:
 * every change made by a statement that runs after it resolved is
 * delivered when its transaction commits (or reported by `onGap`).
 *
 * @example
 * ```ts
 * const events = container.resolve(JOB_EVENTS);
 * const sub = await events.subscribe({ queues: ["emails"] }, {
 *   onEvent: (event) => console.log(event.type, event.queue, event.jobId),
 *   onGap: (gap) => console.warn(`may have missed events (${gap.reason}); re-reading`),
 * });
 * // … later:
 * await sub.close();
 * ```
 */
export interface JobEventSource {
  /** Starts a subscription to the events `filter` passes; resolves once events flow. */
  subscribe(filter: JobEventFilter, handlers: JobEventHandlers): Promise<JobEventSubscription>;
}

/** Token of the {@link JobEventSource} (registered by a driver such as `registerPostgresDriver`). */
export const JOB_EVENTS: InjectionToken<JobEventSource> = Symbol.for("stint.JobEvents");

/**
 * Checks a {@link JobEventFilter} and {@link JobEventHandlers}; throws a
 * `ConfigError` naming what is wrong.
 *
 * @example
 * ```ts
 * checkJobEventSubscription({ queues: ["emails"] }, { onEvent: console.log });
 * ```
 */
export function checkJobEventSubscription(filter: JobEventFilter, handlers: JobEventHandlers): void {
  if (typeof filter !== "object" || filter === null) throw new ConfigError("filter", "must be an object");
  if (
    filter.queues !== undefined &&
    (!Array.isArray(filter.queues) || filter.queues.length === 0 || filter.queues.some((queue) => typeof queue !== "string" || queue === ""))
  ) {
    throw new ConfigError("filter.queues", "must be a non-empty array of queue names (leave it out for all queues)");
  }
  if (
    filter.types !== undefined &&
    (!Array.isArray(filter.types) || filter.types.length === 0 || filter.types.some((type: unknown) => !(JOB_EVENT_TYPES as readonly unknown[]).includes(type)))
  ) {
    throw new ConfigError("filter.types", `must be a non-empty array of ${JOB_EVENT_TYPES.join(", ")} (leave it out for all types)`);
  }
  if (typeof handlers !== "object" || handlers === null || typeof handlers.onEvent !== "function") {
    throw new ConfigError("handlers.onEvent", "must be a function");
  }
  if (handlers.onGap !== undefined && typeof handlers.onGap !== "function") throw new ConfigError("handlers.onGap", "must be a function");
}

/**
 * Whether `event` passes `filter`.
 *
 * @example
 * ```ts
 * matchesJobEventFilter({ queues: ["emails"] }, event);
 * ```
 */
export function matchesJobEventFilter(filter: JobEventFilter, event: JobEvent): boolean {
  return (filter.queues === undefined || filter.queues.includes(event.queue)) && (filter.types === undefined || filter.types.includes(event.type));
}

/**
 * Whether `gap` concerns a subscription with `filter`: a `summarised` gap
 * only when the filter passes its queue and type, every other gap always.
 *
 * @example
 * ```ts
 * gapConcerns({ queues: ["emails"] }, { reason: "reconnected" }); // true
 * ```
 */
export function gapConcerns(filter: JobEventFilter, gap: JobEventGap): boolean {
  if (gap.reason !== "summarised") return true;
  return (filter.queues === undefined || filter.queues.includes(gap.queue)) && (filter.types === undefined || filter.types.includes(gap.type));
}

interface MemorySubscriber {
  readonly filter: JobEventFilter;
  readonly handlers: JobEventHandlers;
}

/**
 * A {@link JobEventSource} within one process, for tests and the test kit:
 * `publish` delivers an event to the matching subscribers, `reportGap` a gap
 * to all of them.
 *
 * @example
 * ```ts
 * const events = new InMemoryJobEvents();
 * container.registerInstance(JOB_EVENTS, events);
 * events.publish({ type: "started", jobId: "1", queue: "emails", attempt: 1, at: new Date() });
 * ```
 */
export class InMemoryJobEvents implements JobEventSource {
  readonly #subscribers = new Set<MemorySubscriber>();
  readonly #onError: (error: Error) => void;

  constructor(options: { readonly onError?: (error: Error) => void } = {}) {
    this.#onError = options.onError ?? (() => undefined);
  }

  /** How many subscriptions are open. */
  get subscribers(): number {
    return this.#subscribers.size;
  }

  /** Adds a subscription; it hears every later `publish` its filter passes. */
  subscribe(filter: JobEventFilter, handlers: JobEventHandlers): Promise<JobEventSubscription> {
    checkJobEventSubscription(filter, handlers);
    const subscriber: MemorySubscriber = Object.freeze({ filter: { ...filter }, handlers });
    this.#subscribers.add(subscriber);
    return Promise.resolve(
      Object.freeze({
        close: (): Promise<void> => {
          this.#subscribers.delete(subscriber);
          return Promise.resolve();
        },
      }),
    );
  }

  /** Delivers `event` to every subscription whose filter it passes. */
  publish(event: JobEvent): void {
    for (const { filter, handlers } of [...this.#subscribers]) {
      if (matchesJobEventFilter(filter, event)) this.#call(() => handlers.onEvent(event));
    }
  }

  /** Tells every subscription that it may have missed events (a `summarised` gap only those whose filter passes its queue and type). */
  reportGap(gap: JobEventGap): void {
    for (const { filter, handlers } of [...this.#subscribers]) {
      if (gapConcerns(filter, gap)) this.#call(() => handlers.onGap?.(gap));
    }
  }

  #call(handler: () => void): void {
    try {
      handler();
    } catch (thrown) {
      this.#onError(coerceError(thrown));
    }
  }
}
