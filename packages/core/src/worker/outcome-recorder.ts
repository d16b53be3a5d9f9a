import { coerceError, describeError } from "../errors/coerce-error";
import { ErrorCode } from "../errors/error-codes";
import type { SnoozeError } from "../errors/job-errors";
import { errorCodeOf, hasErrorCode } from "../errors/stint-error";
import type { ClaimedJob } from "../job/job-record";
import { compileRedaction, secretValuesOf } from "../job/secret-fields";
import { serializeResult } from "../job/serialize-payload";
import type { LogFields, Logger } from "../logging/logger";
import type { FenceResult, JobFailure, JobStore } from "../store/job-store";
import type { AttemptOutcome, JobHooks } from "./attempt-runner";
import { CompletionBatcher } from "./completion-batcher";
import type { AttemptState } from "./attempt-context";
import type { JobContext } from "./job-context";
import type { RunCounters } from "./run-summary";
import type { ResolvedWorkerOptions } from "./worker-options";
import { WriteRetrier } from "./write-retrier";

/**
 * Writes the outcome of each attempt with a fenced store call — success
 * (group-committed), retry, snooze, release at shutdown, dead — counts it
 * and logs one line. A write that matches no row means the lease was lost:
 * the outcome is discarded and counted as `leaseLost`.
 */
export class OutcomeRecorder<T> {
  readonly #store: JobStore;
  readonly #workerId: string;
  readonly #hooks: JobHooks<T>;
  readonly #counters: RunCounters;
  readonly #completions: CompletionBatcher;
  /** Retries outcome writes while the lease could still be ours. */
  readonly #writes: WriteRetrier;

  constructor(store: JobStore, workerId: string, options: ResolvedWorkerOptions, hooks: JobHooks<T>, counters: RunCounters, log: Logger) {
    this.#store = store;
    this.#workerId = workerId;
    this.#hooks = hooks;
    this.#counters = counters;
    this.#completions = new CompletionBatcher(store, workerId, options.clock, log);
    this.#writes = new WriteRetrier(options.clock, options.leaseMs);
  }

  /** Waits until every success handed in so far is written. */
  drain(): Promise<void> {
    return this.#completions.drain();
  }

  /** Writes, counts and logs how one attempt ended. */
  async record(job: ClaimedJob, outcome: AttemptOutcome<T>, ctx: JobContext, state: AttemptState): Promise<void> {
    const fields = { durationMs: outcome.durationMs };
    const label = `job ${job.id} (${job.queue}, attempt ${job.attempt}/${job.maxAttempts})`;
    if (state.completedInTransaction) {
      // ctx.transaction already committed the success; whatever happened after it cannot change that.
      this.#counters.succeeded += 1;
      ctx.log.info(`Completed job ${job.id} in its own transaction (${job.queue}, ${Math.round(outcome.durationMs)} ms, attempt ${job.attempt}/${job.maxAttempts})`, fields);
      return;
    }
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
        return this.#recordLapse(ctx, label, outcome.reason);
      case "not-started": {
        // Nothing ran: hand the job back without spending the attempt, if no other worker has it yet.
        await this.#fenced(ctx, { delayMs: 0, failure: null, spendAttempt: false });
        this.#counters.leaseLost += 1;
        ctx.log.warn(`The lease on ${label} ran out before it started; the job is given back`);
        return;
      }
      case "failed":
        return this.#recordFailure(job, outcome, ctx, label);
    }
  }

  async #recordFailure(job: ClaimedJob, outcome: AttemptOutcome<T> & { kind: "failed" }, ctx: JobContext, label: string): Promise<void> {
    const fields = { durationMs: outcome.durationMs, errorCode: errorCodeOf(outcome.error) ?? ErrorCode.Unknown };
    if (hasErrorCode(outcome.error, ErrorCode.LeaseLost)) return this.#lost(ctx, label);
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
    const retried = await this.#fenced(ctx, { delayMs: decision.delayMs, failure: this.#failureOf(ctx, outcome.error), spendAttempt: true });
    if (!retried.applied) return this.#lost(ctx, label);
    this.#counters.retried += 1;
    ctx.log.warn(`Job ${job.id} failed (${job.queue}, attempt ${job.attempt}/${job.maxAttempts}): ${message}; retrying in ${decision.delayMs} ms`, fields);
  }

  async #decide(item: T, error: unknown, ctx: JobContext) {
    try {
      return await this.#hooks.decide(item, error, ctx);
    } catch (thrown) {
      ctx.log.error(`handleFailure threw (${coerceError(thrown).message}); the job is dead`);
      return { action: "dead" } as const;
    }
  }

  async #markDead(ctx: JobContext, error: unknown, message: string, fields: LogFields): Promise<void> {
    const job = { id: ctx.job.id, attempt: ctx.job.attempt };
    const failure = this.#failureOf(ctx, error);
    const result = await this.#writes.run(() => this.#store.markDead({ workerId: this.#workerId, job, failure }));
    if (!result?.applied) return this.#lost(ctx, `job ${ctx.job.id}`);
    this.#counters.dead += 1;
    ctx.log.error(message, fields);
  }

  async #fenced(ctx: JobContext, retry: { delayMs: number; failure: JobFailure | null; spendAttempt: boolean }): Promise<FenceResult> {
    const job = { id: ctx.job.id, attempt: ctx.job.attempt };
    return (await this.#writes.run(() => this.#store.scheduleRetry({ workerId: this.#workerId, job, ...retry }))) ?? { applied: false };
  }

  #failureOf(ctx: JobContext, error: unknown): JobFailure {
    return failureOf(error, secretValuesOf(ctx.job.payload, this.#hooks.secretFields ?? []));
  }

  /**
   * The attempt was stopped because its lease ran out (or the store said
   * another worker owns it). If no other worker has taken the job, the
   * fenced write still matches: the attempt counts as failed and the job is
   * due again at once, or dead when it has no attempt left, as lease rescue
   * would do later. Otherwise the write changes nothing.
   */
  async #recordLapse(ctx: JobContext, label: string, reason: Error): Promise<void> {
    const failure = this.#failureOf(ctx, reason);
    const job = { id: ctx.job.id, attempt: ctx.job.attempt };
    const exhausted = ctx.job.attempt >= ctx.job.maxAttempts;
    const written = exhausted
      ? await this.#writes.run(() => this.#store.markDead({ workerId: this.#workerId, job, failure }))
      : await this.#fenced(ctx, { delayMs: 0, failure, spendAttempt: true });
    this.#counters.leaseLost += 1;
    const after = !written?.applied ? "another worker owns the job now" : exhausted ? "no attempt is left, so it is dead" : "the job is due again";
    ctx.log.warn(`Stopped ${label}: ${reason.message}; ${after}`);
  }

  #lost(ctx: JobContext, label: string): void {
    this.#counters.leaseLost += 1;
    ctx.log.warn(`Lost the lease on ${label}; its outcome is discarded`);
  }
}

/** The error text and code stored with a failed attempt, with the job's secret payload values redacted. */
function failureOf(error: unknown, secrets: readonly string[]): JobFailure {
  return { message: describeError(error, compileRedaction(secrets)), code: errorCodeOf(error) ?? ErrorCode.Unknown };
}
