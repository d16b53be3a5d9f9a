import { ConfigError } from "../errors/config-errors";
import { ErrorCode } from "../errors/error-codes";
import { JobTimeoutError } from "../errors/job-errors";
import { errorCodeOf } from "../errors/stint-error";
import type { Span } from "@opentelemetry/api";
import { serializeResult } from "../job/serialize-payload";
import { endAttemptSpan, startAttemptSpan, tracingIsOn } from "../tracing/job-tracing";
import type { AttemptContext } from "./attempt-context";
import { parseFailed, stoppedBeforeStart, type Attempt, type AttemptExecutor, type AttemptResult } from "./attempt-executor";
import type { AttemptPipelineParts } from "./attempt-pipeline";
import type { AttemptOutcome } from "./attempt-outcome";
import type { BatchContext, BatchEntry } from "./batch-context";
import type { LeaseKeeper } from "./lease-keeper";

/** The reason the batch's timeout timer is cancelled with once the batch is over. */
const BATCH_OVER = "batch over";

/** One job of a running batch, until it settles. */
interface BatchJob<T> {
  /** Where its result goes in the batch's answer. */
  readonly index: number;
  readonly attempt: Attempt;
  readonly ctx: AttemptContext;
  readonly entry: BatchEntry<T>;
  /** The job's consumer span, when tracing is on. */
  readonly span: Span | undefined;
  settled: boolean;
}

/** What a {@link BatchExecutor} works with: the worker's attempt executor and hooks, and the run's lease keeper. */
export interface BatchExecutorParts<T> extends Pick<AttemptPipelineParts<T>, "hooks" | "events" | "options" | "log" | "workerId"> {
  readonly executor: AttemptExecutor<T>;
  readonly leases: LeaseKeeper;
}

/**
 * Runs several claimed attempts through one `processBatch` call. Each
 * attempt keeps what a single one has: its own lease (the keeper renews
 * them all in one heartbeat), its parse (a payload that does not parse is
 * dead at once, the rest run), its `JobContext` and its outcome, recorded
 * through the same executor the moment the job settles: by `ctx.succeed`
 * or `ctx.fail`, by its own signal (a cancel, a lost lease, shutdown), or
 * when the handler resolves (the rest succeed) or throws (the rest fail).
 * So a batch that dies half-way leaves only its unsettled jobs to run again.
 *
 * @example
 * ```ts
 * const results = await new BatchExecutor(parts).run(attempts, () => slots.free());
 * ```
 */
export class BatchExecutor<T> {
  readonly #parts: BatchExecutorParts<T>;

  constructor(parts: BatchExecutorParts<T>) {
    this.#parts = parts;
  }

  /**
   * Runs the attempts as one batch and records each one's outcome; never
   * rejects. `handled` is called once the handler has answered (the slot
   * is free), before the last outcomes are written.
   */
  async run(attempts: readonly Attempt[], handled: () => void = () => undefined): Promise<AttemptResult[]> {
    const { executor, hooks, leases, events, options } = this.#parts;
    const started = options.clock.now();
    const traced = tracingIsOn();
    const results: Promise<AttemptResult>[] = [];
    const jobs: BatchJob<T>[] = [];
    for (const [index, attempt] of attempts.entries()) {
      if (!leases.holds(attempt.job)) {
        results[index] = executor.record(attempt, stoppedBeforeStart(attempt.signal));
        continue;
      }
      events.jobStarted(attempt.job);
      const ctx = executor.contextOf(attempt);
      // Each job has its consumer span, from its start to its settling; the handler's own spans cannot be any one job's children.
      const span = traced ? startAttemptSpan(attempt.job).span : undefined;
      try {
        const item = await hooks.parse(attempt.job.payload);
        jobs.push({ index, attempt, ctx, entry: { item, job: attempt.job, ctx }, span, settled: false });
      } catch (thrown) {
        results[index] = this.#recorded(attempt, ctx, parseFailed(thrown, options.clock.now() - started), span);
      }
    }
    if (jobs.length > 0) await this.#process(jobs, results, started);
    handled();
    return Promise.all(results);
  }

  async #process(jobs: readonly BatchJob<T>[], results: Promise<AttemptResult>[], started: number): Promise<void> {
    const { executor, hooks, options, log, workerId } = this.#parts;
    const elapsed = (): number => options.clock.now() - started;
    const batch = new AbortController();
    let left = jobs.length;
    let allSettled: () => void = () => undefined;
    const settledAll = new Promise<void>((resolve) => (allSettled = resolve));
    const settle = (job: BatchJob<T>, outcome: AttemptOutcome | Promise<AttemptOutcome>): boolean => {
      if (job.settled) return false;
      job.settled = true;
      results[job.index] = this.#recorded(job.attempt, job.ctx, outcome, job.span);
      if (--left === 0) allSettled();
      return true;
    };
    const fail = (job: BatchJob<T>, failure: unknown): boolean =>
      !job.settled && settle(job, executor.failureOutcome(job.entry.item, failure, job.ctx, job.attempt.signal, elapsed()));
    const succeed = (job: BatchJob<T>, result: unknown): boolean => {
      if (job.settled) return false;
      let resultJson: string | null;
      try {
        resultJson = serializeResult(result);
      } catch (thrown) {
        return fail(job, thrown);
      }
      return settle(job, { kind: "succeeded", result, resultJson, inTransaction: job.ctx.completedInTransaction, durationMs: elapsed() });
    };
    const byEntry = new Map(jobs.map((job) => [job.entry, job]));
    const jobOf = (entry: BatchEntry<T>, call: string): BatchJob<T> => {
      const job = byEntry.get(entry);
      if (job === undefined) throw new ConfigError(call, "the entry is not one of this batch's");
      return job;
    };
    for (const job of jobs) {
      // A job's own signal settles it at once, as it ends a single attempt; all but a cancel stop the whole batch.
      void job.attempt.signal.aborted.then((reason) => {
        fail(job, reason);
        if (errorCodeOf(reason) !== ErrorCode.Cancelled) batch.abort(reason);
      });
    }
    const timeout = this.#startTimeout(jobs);
    const ctx: BatchContext<T> = {
      workerId,
      signal: batch.signal,
      log: log.child({ batchSize: jobs.length }),
      succeed: (entry, result) => succeed(jobOf(entry, "succeed"), result),
      fail: (entry, error) => fail(jobOf(entry, "fail"), error),
    };
    const stopped = new Promise<never>((_, reject) => batch.signal.addEventListener("abort", () => reject(batch.signal.reason), { once: true }));
    stopped.catch(() => undefined);
    let failure: { readonly error: unknown } | undefined;
    try {
      await Promise.race([
        hooks.processBatch(
          jobs.map((job) => job.entry),
          ctx,
        ),
        settledAll,
        stopped,
      ]);
    } catch (thrown) {
      failure = { error: batch.signal.aborted ? batch.signal.reason : thrown };
    } finally {
      timeout?.abort(BATCH_OVER);
    }
    for (const job of jobs) {
      if (failure === undefined) succeed(job, undefined);
      else fail(job, job.attempt.signal.reason ?? failure.error);
    }
  }

  /** Aborts every job of the batch with `JobTimeoutError` once the shortest of their timeouts passes. */
  #startTimeout(jobs: readonly BatchJob<T>[]): AbortController | undefined {
    let timeoutMs = Infinity;
    for (const { attempt } of jobs) if (attempt.job.timeoutMs !== null && attempt.job.timeoutMs < timeoutMs) timeoutMs = attempt.job.timeoutMs;
    if (timeoutMs === Infinity) return undefined;
    const cancel = new AbortController();
    void this.#parts.options.clock.sleep(timeoutMs, cancel.signal).then(() => {
      if (cancel.signal.aborted) return;
      const error = new JobTimeoutError(timeoutMs);
      for (const job of jobs) job.attempt.signal.abort(error);
    });
    return cancel;
  }

  /** Records a settled job's outcome once its progress and log lines are stored. */
  async #recorded(attempt: Attempt, ctx: AttemptContext, outcome: AttemptOutcome | Promise<AttemptOutcome>, span: Span | undefined): Promise<AttemptResult> {
    const settled = await outcome;
    if (span !== undefined) endAttemptSpan(span, settled.kind, "error" in settled ? settled.error : undefined);
    await ctx.flushProgress();
    return this.#parts.executor.record(attempt, settled);
  }
}
