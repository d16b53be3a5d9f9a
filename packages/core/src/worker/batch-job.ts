import type { Span } from "@opentelemetry/api";
import type { ClaimedJob } from "../job/job-record";
import { serializeResult } from "../job/serialize-payload";
import { endAttemptSpan } from "../tracing/job-tracing";
import type { AttemptContext } from "./attempt-context";
import type { Attempt, AttemptResult } from "./attempt-executor";
import type { AttemptOutcome, SucceededOutcome } from "./attempt-outcome";
import type { AbortWatcher } from "./attempt-signal";
import type { BatchEntry } from "./batch-context";
import type { BatchRun } from "./batch-run";
import type { JobContext } from "./job-context";

/**
 * One job of a running batch: the entry `processBatch` gets (its `item`,
 * `job` and `ctx`), and the job's part in the batch until it settles. It
 * costs the batch little per job: its `JobContext` is made the first time
 * `ctx` is read (most batch handlers never read it), and it watches its own
 * attempt's signal itself (see `AttemptSignal.watch`), with no promise.
 * A success with nothing else to write joins the batch's group of
 * successes (see {@link BatchRun}); any other outcome is recorded alone,
 * as a single attempt's is.
 *
 * @example
 * ```ts
 * const job = new BatchJob(run, index, attempt, item, span);
 * job.settleSucceeded({ sent: true }); // true; a second settle returns false
 * ```
 */
export class BatchJob<T> implements BatchEntry<T>, AbortWatcher {
  readonly item: T;
  readonly job: ClaimedJob;
  readonly #run: BatchRun<T>;
  /** Where its result goes in the batch's answer. */
  readonly #index: number;
  readonly #attempt: Attempt;
  /** The job's consumer span, when tracing is on. */
  readonly #span: Span | undefined;
  #context: AttemptContext | undefined;
  #settled = false;

  constructor(run: BatchRun<T>, index: number, attempt: Attempt, item: T, span: Span | undefined) {
    this.item = item;
    this.job = attempt.job;
    this.#run = run;
    this.#index = index;
    this.#attempt = attempt;
    this.#span = span;
  }

  /** The job's own `JobContext`, made on first read. */
  get ctx(): JobContext {
    return this.#contextMade();
  }

  /** Whether this job is one of `run`'s (an entry of another batch is not). */
  belongsTo(run: BatchRun<T>): boolean {
    return this.#run === run;
  }

  /** Why the job's attempt must stop, once it must. */
  get stopReason(): Error | undefined {
    return this.#attempt.signal.reason;
  }

  /** Stops the job's attempt with `reason` (its signal aborts; the batch hears of it as of any abort). */
  stop(reason: Error): void {
    this.#attempt.signal.abort(reason);
  }

  /** From now on, an abort of the job's attempt signal settles it (see `BatchRun.jobAborted`). */
  watchSignal(): void {
    this.#attempt.signal.watch(this);
  }

  /** The job's attempt signal aborted: the batch settles it (see `BatchRun.jobAborted`). */
  attemptAborted(reason: Error): void {
    this.#run.jobAborted(this, reason);
  }

  /** Settles the job as succeeded with `result`; false when it was settled already. A result that is not JSON fails it instead. */
  settleSucceeded(result: unknown): boolean {
    if (this.#settled) return false;
    const ctx = this.#context;
    if (result === undefined && ctx === undefined) {
      // The common case: nothing to store, nothing else written; the jobs settled in this turn share one outcome.
      this.#settled = true;
      if (this.#span !== undefined) endAttemptSpan(this.#span, "succeeded");
      this.#run.settledInGroup(this.#index, this.#attempt, this.#run.plainSuccess());
      return true;
    }
    let resultJson: string | null;
    try {
      resultJson = serializeResult(result);
    } catch (thrown) {
      return this.settleFailed(thrown);
    }
    this.#settled = true;
    const outcome: SucceededOutcome = {
      kind: "succeeded",
      result,
      resultJson,
      inTransaction: ctx?.completedInTransaction ?? false,
      durationMs: this.#run.elapsed(),
    };
    if (ctx?.addsSteps === true) {
      this.#run.settledAlone(this.#index, this.#recorded(ctx, this.#withAddedSteps(ctx, outcome)));
      return true;
    }
    if (ctx === undefined || (!outcome.inTransaction && !ctx.writesPending)) {
      if (this.#span !== undefined) endAttemptSpan(this.#span, outcome.kind);
      this.#run.settledInGroup(this.#index, this.#attempt, outcome);
    } else {
      this.#run.settledAlone(this.#index, this.#recorded(ctx, outcome));
    }
    return true;
  }

  /** Settles the job as failed with `failure` (`handleFailure` decides what follows); false when it was settled already. */
  settleFailed(failure: unknown): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    const ctx = this.#contextMade();
    this.#run.settledAlone(this.#index, this.#recorded(ctx, this.#run.failureOutcome(this.item, failure, ctx, this.#attempt, this.#run.elapsed())));
    return true;
  }

  /** The success written with the steps the handler added (`ctx.addSteps`), or the failure of that write. */
  async #withAddedSteps(ctx: AttemptContext, outcome: SucceededOutcome): Promise<AttemptOutcome> {
    try {
      await ctx.completeWithAddedSteps(outcome.result);
      return { ...outcome, inTransaction: true };
    } catch (thrown) {
      return this.#run.failureOutcome(this.item, thrown, ctx, this.#attempt, this.#run.elapsed());
    }
  }

  #contextMade(): AttemptContext {
    this.#context ??= this.#run.contextOf(this.#attempt);
    return this.#context;
  }

  /** Records the outcome once its progress and log lines are stored. */
  async #recorded(ctx: AttemptContext, outcome: AttemptOutcome | Promise<AttemptOutcome>): Promise<AttemptResult> {
    const settled = await outcome;
    if (this.#span !== undefined) endAttemptSpan(this.#span, settled.kind, "error" in settled ? settled.error : undefined);
    await ctx.flushProgress();
    return this.#run.record(this.#attempt, settled);
  }
}
