import { coerceError, describeError } from "../errors/coerce-error";
import { ErrorCode } from "../errors/error-codes";
import { ShutdownError, type SnoozeError } from "../errors/job-errors";
import { errorCodeOf, hasErrorCode } from "../errors/stint-error";
import { buildNewJob } from "../job/enqueue-options";
import type { ClaimedJob } from "../job/job-record";
import { serializeResult } from "../job/serialize-payload";
import type { LogFields, Logger } from "../logging/logger";
import type { FenceResult, JobFailure, JobStore } from "../store/job-store";
import { runAttempt, type AttemptOutcome, type JobHooks } from "./attempt-runner";
import { CompletionBatcher } from "./completion-batcher";
import type { JobContext } from "./job-context";
import { LeaseKeeper } from "./lease-keeper";
import { newRunCounters, type RunCounters, type RunSummary, type StopReason } from "./run-summary";
import type { ResolvedWorkerOptions } from "./worker-options";
import { StopGate } from "./stop-gate";
import { WriteRetrier } from "./write-retrier";

/** Limits of one `start()`. */
export interface RunOptions {
  /** Stop claiming when it aborts; in-flight jobs get `shutdownTimeoutMs`, then are given back. */
  readonly signal?: AbortSignal;
  /** Claim at most this many jobs, then finish. */
  readonly maxJobs?: number;
}

interface RunParts<T> {
  readonly store: JobStore;
  readonly log: Logger;
  readonly options: ResolvedWorkerOptions;
  readonly workerId: string;
  readonly queue: string;
  readonly hooks: JobHooks<T>;
}

/**
 * One run of a worker over its queue: claims as many due jobs as it has
 * free slots, runs them, records each outcome with a fenced write, and stops
 * when no due job is left, a budget is spent or its signal aborts.
 */
export class WorkerRun<T> {
  readonly #parts: RunParts<T>;
  readonly #counters: RunCounters = newRunCounters();
  /** Jobs claimed and not yet recorded, with the means to abort their handler. */
  readonly #inFlight = new Map<string, { readonly controller: AbortController; readonly done: Promise<void> }>();
  /** Handlers running now: what `concurrency` bounds. A job whose outcome is being written no longer holds a slot. */
  #busySlots = 0;
  /** How many claimed jobs have been fully recorded; a claim that raced a recording must not conclude "drained". */
  #recorded = 0;
  readonly #leases: LeaseKeeper;
  readonly #completions: CompletionBatcher;
  /** Retries claims through an outage for up to a minute. */
  readonly #claims: WriteRetrier;
  /** Retries outcome writes while the lease could still be ours. */
  readonly #writes: WriteRetrier;
  readonly #slotFreed = new StopGate();

  constructor(parts: RunParts<T>) {
    this.#parts = parts;
    const { store, options, workerId, log } = parts;
    this.#leases = new LeaseKeeper(store, options, workerId, log);
    this.#completions = new CompletionBatcher(store, workerId, options.clock, log);
    this.#claims = new WriteRetrier(options.clock, 60_000);
    this.#writes = new WriteRetrier(options.clock, options.leaseMs);
  }

  /** Runs until drained, a budget is spent or the signal aborts; never rejects. */
  async run(runOptions: RunOptions): Promise<RunSummary> {
    const { clock } = this.#parts.options;
    const started = clock.now();
    this.#leases.start();
    let stoppedBecause: StopReason;
    let error: string | undefined;
    try {
      stoppedBecause = await this.#claimLoop(runOptions);
    } catch (thrown) {
      stoppedBecause = "infrastructure";
      error = coerceError(thrown).message;
    }
    await this.#finishInFlight(runOptions.signal);
    await this.#completions.drain();
    await this.#leases.stop();
    return Object.freeze({
      queue: this.#parts.queue,
      workerId: this.#parts.workerId,
      ...this.#counters,
      durationMs: clock.now() - started,
      stoppedBecause,
      ...(error === undefined ? {} : { error }),
    });
  }

  async #claimLoop({ signal, maxJobs }: RunOptions): Promise<StopReason> {
    const { store, options, workerId, queue } = this.#parts;
    for (;;) {
      if (signal?.aborted) return "signal";
      const budget = maxJobs === undefined ? Infinity : maxJobs - this.#counters.claimed;
      if (budget <= 0) return "max-jobs";
      const free = Math.min(options.concurrency - this.#busySlots, budget);
      if (free <= 0) {
        await this.#slotFreed.wait(signal);
        continue;
      }
      const claimedAt = options.clock.now();
      const recordedBefore = this.#recorded;
      const jobs = await this.#claims.run(
        () => store.claimBatch({ queue, workerId, limit: free, leaseMs: options.leaseMs }),
        signal,
        (message) => this.#parts.log.warn(`Claim failed, retrying: ${message}`, { queue, workerId }),
      );
      if (jobs === undefined) return "signal";
      this.#counters.claimed += jobs.length;
      for (const job of jobs) this.#launch(job, claimedAt);
      if (jobs.length === 0) {
        // A retry written while this claim ran may already be due: look again before concluding.
        if (this.#recorded !== recordedBefore) continue;
        if (this.#inFlight.size === 0) return "drained";
        await this.#slotFreed.wait(signal);
      } else {
        // Let finishing jobs free their slots so the next claim takes several at once.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  }

  #launch(job: ClaimedJob, claimedAt: number): void {
    const controller = new AbortController();
    this.#leases.hold(job, controller, claimedAt);
    this.#busySlots += 1;
    const done = this.#execute(job, controller).finally(() => {
      this.#leases.release(job.id);
      this.#inFlight.delete(job.id);
      this.#recorded += 1;
      this.#slotFreed.open();
    });
    this.#inFlight.set(job.id, { controller, done });
  }

  async #execute(job: ClaimedJob, controller: AbortController): Promise<void> {
    const ctx = this.#contextFor(job, controller.signal);
    const outcome = await runAttempt(this.#parts.hooks, ctx, controller, this.#parts.options.clock);
    this.#busySlots -= 1;
    this.#slotFreed.open();
    try {
      await this.#record(job, outcome, ctx);
    } catch (thrown) {
      this.#counters.leaseLost += 1;
      ctx.log.error(`Could not record the outcome of job ${job.id}: ${coerceError(thrown).message}; it will run again when its lease expires`);
    }
  }

  async #record(job: ClaimedJob, outcome: AttemptOutcome<T>, ctx: JobContext): Promise<void> {
    const fields = { durationMs: outcome.durationMs };
    const label = `job ${job.id} (${job.queue}, attempt ${job.attempt}/${job.maxAttempts})`;
    switch (outcome.kind) {
      case "succeeded": {
        const applied = await this.#completions.complete({
          id: job.id,
          attempt: job.attempt,
          resultJson: serializeResult(outcome.result),
          durationMs: Math.round(outcome.durationMs),
        });
        if (!applied) return this.#lost(ctx, label);
        this.#counters.succeeded += 1;
        ctx.log.info(`Completed job ${job.id} (${job.queue}, ${Math.round(outcome.durationMs)} ms, attempt ${job.attempt}/${job.maxAttempts})`, fields);
        return;
      }
      case "unparseable":
        return this.#markDead(ctx, outcome.error, `Job ${job.id} has an invalid payload and is dead`, fields);
      case "interrupted":
        if (hasErrorCode(outcome.reason, ErrorCode.Shutdown)) {
          const released = await this.#fenced(ctx, { delayMs: 0, failure: null, spendAttempt: false });
          if (!released.applied) return this.#lost(ctx, label);
          this.#counters.released += 1;
          ctx.log.warn(`Released ${label} at shutdown; its attempt is not spent`, fields);
          return;
        }
        return this.#lost(ctx, label);
      case "failed":
        return this.#recordFailure(job, outcome, ctx, label);
    }
  }

  async #recordFailure(job: ClaimedJob, outcome: AttemptOutcome<T> & { kind: "failed" }, ctx: JobContext, label: string): Promise<void> {
    const fields = { durationMs: outcome.durationMs, errorCode: errorCodeOf(outcome.error) ?? ErrorCode.Unknown };
    if (hasErrorCode(outcome.error, ErrorCode.Snooze)) {
      const delayMs = (outcome.error as SnoozeError).delayMs;
      const snoozed = await this.#fenced(ctx, { delayMs, failure: null, spendAttempt: false });
      if (!snoozed.applied) return this.#lost(ctx, label);
      this.#counters.snoozed += 1;
      ctx.log.info(`Snoozed ${label} for ${delayMs} ms`, fields);
      return;
    }
    const decision = await this.#decide(outcome.item, outcome.error, ctx);
    const message = coerceError(outcome.error).message;
    if (decision.action === "dead") {
      return this.#markDead(ctx, outcome.error, `Job ${job.id} failed and is dead (${job.queue}, attempt ${job.attempt}/${job.maxAttempts}): ${message}`, fields);
    }
    const retried = await this.#fenced(ctx, { delayMs: decision.delayMs, failure: failureOf(outcome.error), spendAttempt: true });
    if (!retried.applied) return this.#lost(ctx, label);
    this.#counters.retried += 1;
    ctx.log.warn(`Job ${job.id} failed (${job.queue}, attempt ${job.attempt}/${job.maxAttempts}): ${message}; retrying in ${decision.delayMs} ms`, fields);
  }

  async #decide(item: T, error: unknown, ctx: JobContext) {
    try {
      return await this.#parts.hooks.decide(item, error, ctx);
    } catch (thrown) {
      ctx.log.error(`handleFailure threw (${coerceError(thrown).message}); the job is dead`);
      return { action: "dead" } as const;
    }
  }

  async #markDead(ctx: JobContext, error: unknown, message: string, fields: LogFields): Promise<void> {
    const { store, workerId } = this.#parts;
    const job = { id: ctx.job.id, attempt: ctx.job.attempt };
    const result = await this.#writes.run(() => store.markDead({ workerId, job, failure: failureOf(error) }));
    if (!result?.applied) return this.#lost(ctx, `job ${ctx.job.id}`);
    this.#counters.dead += 1;
    ctx.log.error(message, fields);
  }

  async #fenced(ctx: JobContext, retry: { delayMs: number; failure: JobFailure | null; spendAttempt: boolean }): Promise<FenceResult> {
    const { store, workerId } = this.#parts;
    const job = { id: ctx.job.id, attempt: ctx.job.attempt };
    return (await this.#writes.run(() => store.scheduleRetry({ workerId, job, ...retry }))) ?? { applied: false };
  }

  #lost(ctx: JobContext, label: string): void {
    this.#counters.leaseLost += 1;
    ctx.log.warn(`Lost the lease on ${label}; its outcome is discarded`);
  }

  #contextFor(job: ClaimedJob, signal: AbortSignal): JobContext {
    const { store, workerId, log } = this.#parts;
    return {
      job,
      workerId,
      signal,
      log: log.child({ jobId: job.id, queue: job.queue, attempt: job.attempt, maxAttempts: job.maxAttempts, workerId }),
      enqueue: (definition, payload, options) => store.enqueue(buildNewJob(definition, payload, options), options?.transaction),
    };
  }

  async #finishInFlight(signal: AbortSignal | undefined): Promise<void> {
    const all = (): Promise<unknown> => Promise.all([...this.#inFlight.values()].map((entry) => entry.done));
    if (this.#inFlight.size === 0) return;
    if (signal === undefined) {
      await all();
      return;
    }
    const { shutdownTimeoutMs, clock } = this.#parts.options;
    await Promise.race([all(), this.#whenAborted(signal)]);
    if (this.#inFlight.size === 0) return;
    const grace = new AbortController();
    await Promise.race([all(), clock.sleep(shutdownTimeoutMs, grace.signal)]);
    grace.abort();
    for (const { controller } of this.#inFlight.values()) controller.abort(new ShutdownError());
    await all();
  }

  /** Resolves when `signal` aborts (never otherwise). */
  #whenAborted(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }
}

function failureOf(error: unknown): JobFailure {
  return { message: describeError(error), code: errorCodeOf(error) ?? ErrorCode.Unknown };
}
