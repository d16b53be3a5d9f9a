import { coerceError } from "../errors/coerce-error";
import { ErrorCode } from "../errors/error-codes";
import { CancelledError } from "../errors/job-errors";
import { errorCodeOf } from "../errors/stint-error";
import type { ClaimedJob, JobRecord } from "../job/job-record";
import type { Clock } from "../time/clock";
import type { AttemptOutcome, WriteResult } from "../worker/attempt-outcome";
import type { RunSummary } from "../worker/run-summary";
import type { JobEventBase, WorkerEventMap, WorkerEventName, WorkerEvents } from "./worker-events";

/**
 * The emitting side of one worker run: turns what the run does into typed
 * events on its hubs (the logging subscriber's, `worker.events`, the one
 * given to `runWorkers`). Every method first checks that some hub listens,
 * so an event nobody hears costs a map lookup per hub and allocates nothing.
 *
 * @example
 * ```ts
 * const events = new RunEvents([worker.events], { queue, workerId, clock });
 * events.jobStarted(job);
 * ```
 */
export class RunEvents {
  readonly #hubs: readonly WorkerEvents[];
  readonly #queue: string;
  readonly #workerId: string;
  readonly #clock: Clock;

  constructor(hubs: readonly WorkerEvents[], parts: { readonly queue: string; readonly workerId: string; readonly clock: Clock }) {
    this.#hubs = hubs;
    this.#queue = parts.queue;
    this.#workerId = parts.workerId;
    this.#clock = parts.clock;
  }

  /** Whether any hub has a listener for `name`. */
  wants(name: WorkerEventName): boolean {
    for (const hub of this.#hubs) if (hub.listenerCount(name) > 0) return true;
    return false;
  }

  workerStarted(concurrency: number, leaseMs: number): void {
    if (this.wants("worker.started")) this.#emit("worker.started", { ...this.#worker(), concurrency, leaseMs });
  }

  queueDrained(): void {
    if (this.wants("queue.drained")) this.#emit("queue.drained", this.#worker());
  }

  workerStopped(summary: RunSummary): void {
    if (this.wants("worker.stopped")) this.#emit("worker.stopped", { ...this.#worker(), summary });
  }

  jobStarted(job: ClaimedJob): void {
    if (!this.wants("job.started")) return;
    const now = this.#clock.now();
    this.#emit("job.started", this.#job(job, { waitMs: Math.max(0, now - job.runAt.getTime()) }, now));
  }

  /** `ctx.progress(value)` of an attempt of `job`. */
  jobProgress(job: ClaimedJob, progress: unknown): void {
    if (this.wants("job.progress")) this.#emit("job.progress", this.#job(job, { progress }));
  }

  /** The events of an attempt whose outcome the recorder has written (or failed to). */
  jobOutcome(job: ClaimedJob, outcome: AttemptOutcome, written: WriteResult): void {
    const { durationMs } = outcome;
    if (written === "failed") {
      if (this.wants("job.writeFailed")) this.#emit("job.writeFailed", this.#job(job, { outcome: outcome.kind, durationMs }));
      return;
    }
    if (written === "cancelled") {
      this.#cancelled(job, outcome);
      return;
    }
    if (written === "fence-missed") {
      if (!this.wants("job.leaseLost")) return;
      const error = outcome.kind === "lease-lost" ? outcome.error : new Error("another worker owns the job now");
      this.#emit("job.leaseLost", this.#job(job, { error, started: outcome.kind !== "released", discarded: outcome.kind, durationMs }));
      return;
    }
    switch (outcome.kind) {
      case "succeeded":
        if (this.wants("job.succeeded")) this.#emit("job.succeeded", this.#job(job, { result: outcome.result, durationMs }));
        return;
      case "retry":
        if (this.wants("job.failed")) {
          const now = this.#clock.now();
          this.#emit("job.failed", this.#job(job, { ...failureOf(outcome.error), willRetry: true, retryAt: new Date(now + outcome.delayMs), durationMs }, now));
        }
        return;
      case "dead":
        this.#dead(job, outcome.error, durationMs);
        return;
      case "snoozed":
        if (this.wants("job.snoozed")) this.#emit("job.snoozed", this.#job(job, { delayMs: outcome.delayMs, durationMs }));
        return;
      case "released":
        if (this.wants("job.released")) this.#emit("job.released", this.#job(job, { durationMs }));
        return;
      case "lease-lost":
        if (this.wants("job.leaseLost"))
          this.#emit("job.leaseLost", this.#job(job, { error: outcome.error, started: outcome.started, discarded: null, durationMs }));
        return;
      case "cancelled":
        this.#cancelled(job, outcome);
        return;
    }
  }

  /** An operator cancelled the attempt: it was stopped (`outcome` is `cancelled`), or the outcome it reached is discarded. */
  #cancelled(job: ClaimedJob, outcome: AttemptOutcome): void {
    if (!this.wants("job.cancelled")) return;
    const stopped = outcome.kind === "cancelled";
    this.#emit(
      "job.cancelled",
      this.#job(job, {
        error: stopped ? outcome.error : new CancelledError(`job ${job.id} (attempt ${job.attempt}) was cancelled while it ran`),
        started: "started" in outcome ? outcome.started : true,
        discarded: stopped ? null : outcome.kind,
        durationMs: outcome.durationMs,
      }),
    );
  }

  /** A dead job's attempt failed too: `job.failed` (no retry), then `job.dead`. */
  #dead(job: ClaimedJob, thrown: unknown, durationMs: number): void {
    const failure = failureOf(thrown);
    if (this.wants("job.failed")) {
      this.#emit("job.failed", this.#job(job, { ...failure, willRetry: false, retryAt: null, durationMs }));
    }
    if (this.wants("job.dead")) this.#emit("job.dead", this.#job(job, { ...failure, durationMs }));
  }

  /** `onDead` failed (threw, rejected or timed out) for the death of `job` after `attempt`. */
  onDeadFailed(
    job: JobRecord,
    attempt: number,
    failure: { readonly error: Error; readonly timedOut: boolean; readonly delivery: number; readonly durationMs: number },
  ): void {
    if (!this.wants("job.onDeadFailed")) return;
    const now = this.#clock.now();
    const base: JobEventBase = {
      jobId: job.id,
      queue: job.queue,
      attempt,
      maxAttempts: job.maxAttempts,
      workerId: this.#workerId,
      at: new Date(now),
      runAt: job.runAt,
      payload: job.payload,
    };
    this.#emit("job.onDeadFailed", { ...base, ...failure });
  }

  #emit<K extends WorkerEventName>(name: K, event: WorkerEventMap[K]): void {
    for (const hub of this.#hubs) hub.emit(name, event);
  }

  #worker(): { readonly queue: string; readonly workerId: string; readonly at: Date } {
    return { queue: this.#queue, workerId: this.#workerId, at: new Date(this.#clock.now()) };
  }

  /** A job event: the attempt's fields and `extra`, in one object (no copy of the base: this runs per job). */
  #job<E extends object>(job: ClaimedJob, extra: E, now: number = this.#clock.now()): JobEventBase & E {
    const base: JobEventBase = {
      jobId: job.id,
      queue: job.queue,
      attempt: job.attempt,
      maxAttempts: job.maxAttempts,
      workerId: this.#workerId,
      at: new Date(now),
      runAt: job.runAt,
      payload: job.payload,
    };
    return Object.assign(base, extra);
  }
}

function failureOf(thrown: unknown): { readonly error: Error; readonly errorCode: string } {
  return { error: coerceError(thrown), errorCode: errorCodeOf(thrown) ?? ErrorCode.Unknown };
}
