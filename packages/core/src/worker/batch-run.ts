import { ConfigError } from "../errors/config-errors";
import { ErrorCode } from "../errors/error-codes";
import { JobTimeoutError } from "../errors/job-errors";
import { errorCodeOf } from "../errors/stint-error";
import type { Logger } from "../logging/logger";
import type { AttemptContext } from "./attempt-context";
import type { Attempt, AttemptResult } from "./attempt-executor";
import type { AttemptOutcome, SucceededOutcome } from "./attempt-outcome";
import type { BatchContext, BatchEntry } from "./batch-context";
import type { AttemptRecorded, BatchExecutorParts } from "./batch-executor";
import { BatchJob } from "./batch-job";
import type { BatchLease } from "./batch-lease";

/** The reason the batch's timeout timer is cancelled with once the batch is over. */
const BATCH_OVER = "batch over";

/**
 * One batch, from its `processBatch` call to its last recorded outcome.
 * Its jobs ({@link BatchJob}) settle through it; it counts them, stops the
 * whole batch when one of them must stop for a reason other than a cancel,
 * and records outcomes.
 *
 * The successes settled in one turn of the event loop (every job left
 * when `processBatch` resolves, or a run of `ctx.succeed` calls) go to the
 * recorder together, as one group of the next completion statement with
 * one promise for all of them. Their outcomes are written as soon as a
 * single job's would be (the next statement): a batch that dies half-way
 * leaves settled jobs settled, as before. Every other outcome (a failure,
 * a cancel, a success whose job wrote progress or log lines, or that
 * `ctx.transaction` completed) is recorded alone, as a single attempt's is.
 *
 * @example
 * ```ts
 * const run = new BatchRun(parts, lease, clock.now(), recorded);
 * await run.process(jobs); // the jobs that parsed
 * const results = await run.allRecorded();
 * ```
 */
export class BatchRun<T> {
  readonly #parts: BatchExecutorParts<T>;
  readonly #lease: BatchLease;
  readonly #started: number;
  readonly #recorded: AttemptRecorded | undefined;
  readonly #results: AttemptResult[];
  #unrecorded: number;
  readonly #allRecorded: Promise<AttemptResult[]>;
  #resolveAllRecorded: (results: AttemptResult[]) => void = () => undefined;
  /** Jobs of `process` not settled yet, and what to call when none is left. */
  #left = 0;
  #allSettled: () => void = () => undefined;
  /** Why the whole batch must stop, once it must (`ctx.signal` aborts with it). */
  #stopReason: Error | undefined;
  /** Behind `ctx.signal`, made when the handler first reads it: most batches never stop, and many never read it. */
  #stopController: AbortController | undefined;
  /** Ends the wait for `processBatch` when the batch must stop. */
  #stopWaiting: (reason: Error) => void = () => undefined;
  /** Successes settled and not yet handed to the recorder, by index, attempt and outcome. */
  #groupIndexes: number[] = [];
  #groupAttempts: Attempt[] = [];
  #groupOutcomes: SucceededOutcome[] = [];
  #groupQueued = false;
  /** The outcome the plain successes of the group being gathered share (see {@link plainSuccess}). */
  #plainSuccess: SucceededOutcome | undefined;
  #log: Logger | undefined;

  constructor(parts: BatchExecutorParts<T>, lease: BatchLease, started: number, recorded: AttemptRecorded | undefined) {
    const attempts = lease.attempts;
    this.#parts = parts;
    this.#lease = lease;
    this.#started = started;
    this.#recorded = recorded;
    this.#results = new Array<AttemptResult>(attempts.length);
    this.#unrecorded = attempts.length;
    this.#allRecorded = new Promise((resolve) => (this.#resolveAllRecorded = resolve));
    if (attempts.length === 0) this.#resolveAllRecorded(this.#results);
  }

  /** Resolves with every attempt's result, in order, once all are recorded. */
  allRecorded(): Promise<AttemptResult[]> {
    return this.#allRecorded;
  }

  /** Milliseconds since the batch started. */
  elapsed(): number {
    return this.#parts.options.clock.now() - this.#started;
  }

  /** The `JobContext` of one of the batch's attempts. */
  contextOf(attempt: Attempt): AttemptContext {
    return this.#parts.executor.contextOf(attempt);
  }

  /** The outcome of a job that failed with `failure` (see `AttemptExecutor.failureOutcome`). */
  failureOutcome(item: T, failure: unknown, ctx: AttemptContext, attempt: Attempt, durationMs: number): Promise<AttemptOutcome> {
    return this.#parts.executor.failureOutcome(item, failure, ctx, attempt.signal, durationMs);
  }

  /** Records one attempt's outcome alone (fenced) and stops keeping its lease. */
  record(attempt: Attempt, outcome: AttemptOutcome): Promise<AttemptResult> {
    return this.#parts.executor.record(attempt, outcome);
  }

  /**
   * Runs `processBatch` on `jobs` (the attempts that parsed) and settles
   * every job: a job's own signal settles it at once (all but a cancel
   * stop the whole batch); when `processBatch` resolves, the rest succeed;
   * when it throws or the batch is stopped, the rest fail.
   */
  async process(jobs: readonly BatchJob<T>[]): Promise<void> {
    const { hooks } = this.#parts;
    this.#left = jobs.length;
    const settledAll = new Promise<void>((resolve) => (this.#allSettled = resolve));
    const timeout = this.#startTimeout(jobs);
    for (const job of jobs) job.watchSignal();
    const stopped = new Promise<never>((_, reject) => (this.#stopWaiting = reject));
    stopped.catch(() => undefined);
    if (this.#stopReason !== undefined) this.#stopWaiting(this.#stopReason);
    let failure: { readonly error: unknown } | undefined;
    try {
      await Promise.race([hooks.processBatch(jobs, this.#context(jobs.length)), settledAll, stopped]);
    } catch (thrown) {
      failure = { error: this.#stopReason ?? thrown };
    } finally {
      timeout?.abort(BATCH_OVER);
    }
    for (const job of jobs) {
      if (failure === undefined) job.settleSucceeded(undefined);
      else job.settleFailed(job.stopReason ?? failure.error);
    }
    this.#recordGroup();
  }

  /** A job's attempt signal aborted with `reason`: the job fails with it, and all but a cancel stop the whole batch. */
  jobAborted(job: BatchJob<T>, reason: Error): void {
    job.settleFailed(reason);
    if (errorCodeOf(reason) !== ErrorCode.Cancelled) this.#stopAll(reason);
  }

  /**
   * The outcome of a success with no result and nothing else written,
   * shared by the jobs that settle so in one turn (outcomes are read, never
   * changed): they are recorded together, and took the same time.
   */
  plainSuccess(): SucceededOutcome {
    this.#plainSuccess ??= { kind: "succeeded", result: undefined, resultJson: null, inTransaction: false, durationMs: this.elapsed() };
    return this.#plainSuccess;
  }

  /** A job settled as succeeded with nothing else to write: it joins the group recorded at the end of this turn. */
  settledInGroup(index: number, attempt: Attempt, outcome: SucceededOutcome): void {
    this.#groupIndexes.push(index);
    this.#groupAttempts.push(attempt);
    this.#groupOutcomes.push(outcome);
    this.#settledOne();
    if (!this.#groupQueued) {
      this.#groupQueued = true;
      queueMicrotask(this.#recordQueuedGroup);
    }
  }

  /** A job settled with an outcome recorded alone (`result`). */
  settledAlone(index: number, result: Promise<AttemptResult>): void {
    this.#settledOne();
    this.recordAlone(index, result);
  }

  /** An attempt recorded alone, outside `process` (one that did not parse or whose lease had lapsed). */
  recordAlone(index: number, result: Promise<AttemptResult>): void {
    void result.then((one) => this.#recordedOne(index, one));
  }

  readonly #recordQueuedGroup = (): void => {
    this.#groupQueued = false;
    this.#recordGroup();
  };

  /** Hands the group of successes settled so far to the recorder, as one group. */
  #recordGroup(): void {
    this.#plainSuccess = undefined;
    if (this.#groupAttempts.length === 0) return;
    const indexes = this.#groupIndexes;
    const attempts = this.#groupAttempts;
    const outcomes = this.#groupOutcomes;
    this.#groupIndexes = [];
    this.#groupAttempts = [];
    this.#groupOutcomes = [];
    void this.#parts.executor.recordSucceeded(attempts, outcomes).then((results) => {
      for (let at = 0; at < indexes.length; at += 1) this.#recordedOne(indexes[at]!, results[at]!);
    });
  }

  #settledOne(): void {
    if (--this.#left === 0) this.#allSettled();
  }

  #recordedOne(index: number, result: AttemptResult): void {
    this.#results[index] = result;
    this.#lease.recorded(index);
    this.#recorded?.(result);
    if (--this.#unrecorded === 0) this.#resolveAllRecorded(this.#results);
  }

  /** Stops the whole batch with `reason` (the first reason stays). */
  #stopAll(reason: Error): void {
    if (this.#stopReason !== undefined) return;
    this.#stopReason = reason;
    this.#stopController?.abort(reason);
    this.#stopWaiting(reason);
  }

  #signal(): AbortSignal {
    if (this.#stopController === undefined) {
      this.#stopController = new AbortController();
      if (this.#stopReason !== undefined) this.#stopController.abort(this.#stopReason);
    }
    return this.#stopController.signal;
  }

  /** What `processBatch` gets besides its entries; its signal and logger are made on first use. */
  #context(size: number): BatchContext<T> {
    const { log, workerId } = this.#parts;
    const batchLog = (): Logger => (this.#log ??= log.child({ batchSize: size }));
    const signal = (): AbortSignal => this.#signal();
    return {
      workerId,
      get signal(): AbortSignal {
        return signal();
      },
      get log(): Logger {
        return batchLog();
      },
      succeed: (entry, result) => this.#jobOf(entry, "succeed").settleSucceeded(result),
      fail: (entry, error) => this.#jobOf(entry, "fail").settleFailed(error),
    };
  }

  #jobOf(entry: BatchEntry<T>, call: string): BatchJob<T> {
    if (!(entry instanceof BatchJob) || !(entry as BatchJob<T>).belongsTo(this)) throw new ConfigError(call, "the entry is not one of this batch's");
    return entry as BatchJob<T>;
  }

  /** Aborts every job of the batch with `JobTimeoutError` once the shortest of their timeouts passes. */
  #startTimeout(jobs: readonly BatchJob<T>[]): AbortController | undefined {
    let timeoutMs = Infinity;
    for (const { job } of jobs) if (job.timeoutMs !== null && job.timeoutMs < timeoutMs) timeoutMs = job.timeoutMs;
    if (timeoutMs === Infinity) return undefined;
    const cancel = new AbortController();
    void this.#parts.options.clock.sleep(timeoutMs, cancel.signal).then(() => {
      if (cancel.signal.aborted) return;
      const error = new JobTimeoutError(timeoutMs);
      for (const job of jobs) job.stop(error);
    });
    return cancel;
  }
}
