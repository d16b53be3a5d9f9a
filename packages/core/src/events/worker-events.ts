import type { RunSummary } from "../worker/run-summary";
import { EventHub } from "./event-hub";

/** What every event of one attempt carries. */
export interface JobEventBase {
  readonly jobId: string;
  readonly queue: string;
  /** This attempt's number, starting at 1. */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** The worker incarnation that ran the attempt. */
  readonly workerId: string;
  /** When the event happened, on the worker's clock. */
  readonly at: Date;
  /** When the job was due, on the database clock (its `run_at` at the claim). */
  readonly runAt: Date;
  /** The stored payload, as the handler received it (secret fields included: redact before you log it). */
  readonly payload: unknown;
}

/** `job.started`: the attempt leaves the buffer and `parse` is about to run. */
export interface JobStartedEvent extends JobEventBase {
  /** From `runAt` to `at` in milliseconds (0 when the clocks disagree): how long the job waited for a worker. */
  readonly waitMs: number;
}

/** `job.succeeded`: the success is recorded. */
export interface JobSucceededEvent extends JobEventBase {
  /** What `processItem` resolved to. */
  readonly result: unknown;
  /** How long the attempt ran, in milliseconds. */
  readonly durationMs: number;
}

/** `job.failed`: a failed attempt is recorded; `willRetry` says whether another one follows (else `job.dead` follows). */
export interface JobFailedEvent extends JobEventBase {
  readonly error: Error;
  /** The error's stable code (`STINT_UNKNOWN` when it has none). */
  readonly errorCode: string;
  readonly willRetry: boolean;
  /** When the retry is due (the worker's clock plus the delay; the database's `now()` decides), or `null`. */
  readonly retryAt: Date | null;
  readonly durationMs: number;
}

/** `job.dead`: the job gave up; it follows the attempt's `job.failed` (with `willRetry: false`). */
export interface JobDeadEvent extends JobEventBase {
  readonly error: Error;
  readonly errorCode: string;
  readonly durationMs: number;
}

/** `job.snoozed`: the handler asked to run again later without spending the attempt. */
export interface JobSnoozedEvent extends JobEventBase {
  readonly delayMs: number;
  readonly durationMs: number;
}

/** `job.released`: the worker is stopping and gave the job back unspent. */
export interface JobReleasedEvent extends JobEventBase {
  readonly durationMs: number;
}

/** `job.leaseLost`: the worker no longer owned the job, so its outcome was not recorded by this worker. */
export interface JobLeaseLostEvent extends JobEventBase {
  readonly error: Error;
  /** Whether the handler had begun. */
  readonly started: boolean;
  /** The outcome that was discarded because another worker owns the job now, or `null` when the lease ran out first. */
  readonly discarded: string | null;
  readonly durationMs: number;
}

/**
 * `job.cancelled`: an operator cancelled the job while this worker held the
 * attempt. The handler's signal aborted with `error` (a `CancelledError`);
 * the cancel recorded the job's state, and the attempt wrote nothing.
 */
export interface JobCancelledEvent extends JobEventBase {
  readonly error: Error;
  /** Whether the handler had begun. */
  readonly started: boolean;
  /** The outcome the handler reached before it heard of the cancel, now discarded (`succeeded`, `retry`, …), or `null` when it was stopped. */
  readonly discarded: string | null;
  readonly durationMs: number;
}

/** `job.writeFailed`: the store kept failing, so the outcome is not recorded; the job runs again once its lease lapses. */
export interface JobWriteFailedEvent extends JobEventBase {
  /** The outcome that could not be written: `succeeded`, `retry`, `dead`, `snoozed`, `released` or `lease-lost`. */
  readonly outcome: string;
  readonly durationMs: number;
}

/**
 * `job.onDeadFailed`: the worker's `onDead` hook threw, rejected or ran
 * past `onDeadTimeoutMs` for a dead job. The job stays dead and the hook is
 * not called again for this death. `attempt` is the attempt the job died after.
 */
export interface JobOnDeadFailedEvent extends JobEventBase {
  readonly error: Error;
  /** Whether the hook ran past `onDeadTimeoutMs` (its signal was aborted). */
  readonly timedOut: boolean;
  /** The call's `ctx.delivery`. */
  readonly delivery: number;
  readonly durationMs: number;
}

/** `job.progress`: the handler reported progress (`ctx.progress`). */
export interface JobProgressEvent extends JobEventBase {
  /** The value the handler reported. */
  readonly progress: unknown;
}

/** What the worker-level events carry. */
export interface WorkerEventBase {
  readonly queue: string;
  readonly workerId: string;
  readonly at: Date;
}

/** `worker.started`: `start()` began. */
export interface WorkerStartedEvent extends WorkerEventBase {
  readonly concurrency: number;
  readonly leaseMs: number;
}

/** `queue.drained`: a claim found no due job and nothing is in flight (drain mode: the run ends; loop mode: once per idle spell). */
export type QueueDrainedEvent = WorkerEventBase;

/** `worker.stopped`: `start()` is about to resolve with `summary`. */
export interface WorkerStoppedEvent extends WorkerEventBase {
  readonly summary: RunSummary;
}

/**
 * Every event a worker emits, by name. For one attempt, in order:
 * `job.started`, then one of `job.succeeded`; `job.failed` (followed by
 * `job.dead` when `willRetry` is false, an invalid payload or a permanent
 * error included); `job.snoozed`; `job.released`; `job.leaseLost`;
 * `job.cancelled`; `job.writeFailed`. Once a death is recorded, its `onDead` hook runs (in
 * this worker or another of the queue); `job.onDeadFailed` says it failed.
 * A buffered job given back at shutdown emits only `job.released`. Outcome
 * events follow the store write, so they describe what is recorded.
 */
export interface WorkerEventMap {
  "worker.started": WorkerStartedEvent;
  "job.started": JobStartedEvent;
  "job.succeeded": JobSucceededEvent;
  "job.failed": JobFailedEvent;
  "job.dead": JobDeadEvent;
  "job.snoozed": JobSnoozedEvent;
  "job.released": JobReleasedEvent;
  "job.leaseLost": JobLeaseLostEvent;
  "job.cancelled": JobCancelledEvent;
  "job.writeFailed": JobWriteFailedEvent;
  "job.progress": JobProgressEvent;
  "job.onDeadFailed": JobOnDeadFailedEvent;
  "queue.drained": QueueDrainedEvent;
  "worker.stopped": WorkerStoppedEvent;
}

/** The name of a worker event. */
export type WorkerEventName = keyof WorkerEventMap;

/** Every worker event name, in the order of a job's life. */
export const WORKER_EVENT_NAMES: readonly WorkerEventName[] = Object.freeze([
  "worker.started",
  "job.started",
  "job.succeeded",
  "job.failed",
  "job.dead",
  "job.snoozed",
  "job.released",
  "job.leaseLost",
  "job.cancelled",
  "job.writeFailed",
  "job.progress",
  "job.onDeadFailed",
  "queue.drained",
  "worker.stopped",
] satisfies WorkerEventName[]);

/**
 * The events of one or more workers: each worker has one (`worker.events`),
 * and `runWorkers({ events })` feeds every worker's events into one more.
 *
 * @example
 * ```ts
 * worker.events.on("job.failed", (event) => {
 *   if (!event.willRetry) pager.page(`job ${event.jobId} of ${event.queue} is dead: ${event.error.message}`);
 * });
 * ```
 */
export class WorkerEvents extends EventHub<WorkerEventMap> {}
