import { context } from "@opentelemetry/api";
import { coerceError } from "../errors/coerce-error";
import { ErrorCode } from "../errors/error-codes";
import { HookError, JobTimeoutError, LeaseLostError, ParseError, type SnoozeError } from "../errors/job-errors";
import { errorCodeOf, hasErrorCode } from "../errors/stint-error";
import type { ClaimedJob } from "../job/job-record";
import { serializeResult } from "../job/serialize-payload";
import type { Logger } from "../logging/logger";
import type { RunEvents } from "../events/run-events";
import type { JobStore } from "../store/job-store";
import { AttemptContext } from "./attempt-context";
import type { AttemptOutcome, SucceededOutcome, WriteResult } from "./attempt-outcome";
import { AttemptSignal } from "./attempt-signal";
import type { BatchContext, BatchEntry } from "./batch-context";
import type { FailureDecision, JobContext } from "./job-context";
import type { LeaseKeeper } from "./lease-keeper";
import type { OutcomeRecorder } from "./outcome-recorder";
import type { ResolvedWorkerOptions } from "./worker-options";
import { endAttemptSpan, startAttemptSpan, tracingIsOn } from "../tracing/job-tracing";
import { isThenable } from "../validation/is-thenable";

/** The reason an attempt's timeout timer is cancelled with once the attempt is over (no exception is built). */
const ATTEMPT_OVER = "attempt over";

/** The hooks an executor calls, bound to one worker. */
export interface JobHooks<T> {
  parse(payload: unknown): T | Promise<T>;
  process(item: T, ctx: JobContext): Promise<unknown>;
  /** Runs a batch (`batchSize` above 1); see {@link BatchContext}. */
  processBatch(entries: readonly BatchEntry<T>[], ctx: BatchContext<T>): Promise<void>;
  decide(item: T, error: unknown, ctx: JobContext): FailureDecision | Promise<FailureDecision>;
  /** The job kind's `secretFields`: payload fields kept out of the job's log lines and `last_error`. */
  readonly secretFields: readonly string[];
}

/** One claimed attempt, from its claim to its recorded outcome. */
export interface Attempt {
  readonly job: ClaimedJob;
  readonly signal: AttemptSignal;
}

/** How an attempt ended and whether its outcome was written. */
export interface AttemptResult {
  readonly outcome: AttemptOutcome;
  readonly written: WriteResult;
}

/**
 * Owns every attempt of one worker from claim to recorded outcome:
 * `claimed` takes the lease, `run` calls `parse`, `processItem` (racing its
 * timeout, the lease and a cancel) and, on failure, `handleFailure`, turns their answer
 * into one tagged {@link AttemptOutcome}, hands it to the recorder and
 * releases the lease; `giveBack` returns an attempt that never started.
 */
export class AttemptExecutor<T> {
  readonly #store: JobStore;
  readonly #workerId: string;
  readonly #log: Logger;
  readonly #options: ResolvedWorkerOptions;
  readonly #hooks: JobHooks<T>;
  readonly #leases: LeaseKeeper;
  readonly #recorder: OutcomeRecorder;
  readonly #events: RunEvents;
  /** Attempts whose claim a crash undid and that were claimed again (see {@link supersede}). */
  readonly #superseded = new WeakSet<Attempt>();
  /** Whether {@link supersede} was ever called: until it is, no attempt needs the look-up. */
  #supersededAny = false;

  constructor(parts: {
    readonly store: JobStore;
    readonly workerId: string;
    readonly log: Logger;
    readonly options: ResolvedWorkerOptions;
    readonly hooks: JobHooks<T>;
    readonly leases: LeaseKeeper;
    readonly recorder: OutcomeRecorder;
    readonly events: RunEvents;
  }) {
    this.#store = parts.store;
    this.#workerId = parts.workerId;
    this.#log = parts.log;
    this.#options = parts.options;
    this.#hooks = parts.hooks;
    this.#leases = parts.leases;
    this.#recorder = parts.recorder;
    this.#events = parts.events;
  }

  /**
   * Takes the lease of a job just claimed; `sentAt` is the local time taken
   * just before the claim was sent, `claim` the claim's number from
   * `LeaseKeeper.claimed` (`0`: known to be on disk).
   */
  claimed(job: ClaimedJob, sentAt: number, claim = 0): Attempt {
    const attempt: Attempt = { job, signal: new AttemptSignal() };
    this.#leases.hold(job, attempt.signal, sentAt, claim);
    return attempt;
  }

  /**
   * Runs the attempt and records its outcome; never rejects. `handled` is
   * called once the hooks have answered, before the outcome is written: the
   * handler's slot is free from then on, so writes never hold up handlers.
   */
  async run(attempt: Attempt, handled: () => void = () => undefined): Promise<AttemptResult> {
    const ctx = this.contextOf(attempt);
    let outcome: AttemptOutcome;
    if (this.#leases.holds(attempt.job)) {
      this.#events.jobStarted(attempt.job);
      outcome = tracingIsOn() ? await this.#tracedOutcomeOf(ctx, attempt.signal) : await this.#outcomeOf(ctx, attempt.signal);
    } else {
      outcome = stoppedBeforeStart(attempt.signal);
    }
    handled();
    // The last progress value and log lines are stored before the outcome, never after it.
    await ctx.flushProgress();
    return this.record(attempt, outcome);
  }

  /** The `JobContext` of one attempt, on this executor's store, log and events. */
  contextOf(attempt: Attempt): AttemptContext {
    return new AttemptContext({
      store: this.#store,
      workerId: this.#workerId,
      log: this.#log,
      job: attempt.job,
      abort: attempt.signal,
      secretFields: this.#hooks.secretFields,
      events: this.#events,
      clock: this.#options.clock,
    });
  }

  /**
   * Stops an attempt whose claim a database crash undid, now that this
   * worker has claimed the same attempt again: the job's row is the new
   * claim's, so this one's outcome is not written (it counts as lease lost).
   */
  supersede(attempt: Attempt): void {
    this.#superseded.add(attempt);
    this.#supersededAny = true;
    attempt.signal.abort(
      new LeaseLostError(
        `lost the lease on job ${attempt.job.id} (attempt ${attempt.job.attempt}): a database crash undid its claim, and the same attempt was claimed again`,
      ),
    );
  }

  /** Gives back an attempt that never started (the worker is stopping); never rejects. One an operator cancelled meanwhile stays cancelled. */
  giveBack(attempt: Attempt): Promise<AttemptResult> {
    const reason = attempt.signal.reason;
    const outcome: AttemptOutcome =
      reason !== undefined && errorCodeOf(reason) === ErrorCode.Cancelled
        ? { kind: "cancelled", error: reason, started: false, durationMs: 0 }
        : { kind: "released", started: false, durationMs: 0 };
    return this.record(attempt, outcome);
  }

  /** Records an attempt's outcome (fenced) and stops keeping its lease; never rejects. */
  async record(attempt: Attempt, outcome: AttemptOutcome): Promise<AttemptResult> {
    try {
      if (this.#superseded.has(attempt)) {
        this.#events.jobOutcome(attempt.job, outcome, "fence-missed");
        return { outcome, written: "fence-missed" };
      }
      return { outcome, written: await this.#recorder.record(attempt.job, outcome) };
    } finally {
      this.#leases.release(attempt.job, attempt.signal);
    }
  }

  /**
   * Records the successes of several attempts of a batch together, as one
   * group of the next completion statement; resolves with each one's
   * result, in order, and never rejects. None may have been completed by
   * `ctx.transaction`. Their lease is the batch's (see `BatchLease`).
   */
  recordSucceeded(attempts: readonly Attempt[], outcomes: readonly SucceededOutcome[]): Promise<AttemptResult[]> {
    // An attempt whose claim a crash undid writes nothing (see supersede): that rare group goes one attempt at a time.
    if (this.#supersededAny && attempts.some((attempt) => this.#superseded.has(attempt)))
      return Promise.all(attempts.map((attempt, index) => this.record(attempt, outcomes[index]!)));
    // Nothing here keeps the attempts while the write is on its way.
    const jobs = new Array<ClaimedJob>(attempts.length);
    for (let index = 0; index < attempts.length; index += 1) jobs[index] = attempts[index]!.job;
    return this.#recorder.recordSucceeded(jobs, outcomes).then((written) => resultsOf(outcomes, written));
  }

  /** {@link #outcomeOf} in a consumer span under the producer's (from the job's meta); the handler's own spans are its children. */
  async #tracedOutcomeOf(ctx: AttemptContext, signal: AttemptSignal): Promise<AttemptOutcome> {
    const { span, active } = startAttemptSpan(ctx.job);
    const outcome = await context.with(active, () => this.#outcomeOf(ctx, signal));
    endAttemptSpan(span, outcome.kind, "error" in outcome ? outcome.error : undefined);
    return outcome;
  }

  /** Calls the hooks and turns their answer into an outcome. */
  async #outcomeOf(ctx: AttemptContext, signal: AttemptSignal): Promise<AttemptOutcome> {
    const { clock } = this.#options;
    const started = clock.now();
    const elapsed = (): number => clock.now() - started;
    let item: T;
    try {
      // A parse that answers at once starts the handler without a turn of the microtask queue.
      const parsed = this.#hooks.parse(ctx.job.payload);
      item = isThenable(parsed) ? await parsed : parsed;
    } catch (thrown) {
      return parseFailed(thrown, elapsed());
    }
    const timeout = this.#startTimeout(ctx.job.timeoutMs, signal);
    let failure: unknown;
    try {
      const result = await Promise.race([this.#hooks.process(item, ctx), signal.aborted.then(throwIt)]);
      if (ctx.addsSteps) await ctx.completeWithAddedSteps(result);
      return { kind: "succeeded", result, resultJson: serializeResult(result), inTransaction: ctx.completedInTransaction, durationMs: elapsed() };
    } catch (thrown) {
      failure = signal.reason ?? thrown;
    } finally {
      timeout?.abort(ATTEMPT_OVER);
    }
    return this.failureOutcome(item, failure, ctx, signal, elapsed());
  }

  /**
   * The outcome of an attempt whose handler failed with `failure` after
   * `durationMs`: cancelled, lease lost, released or snoozed when the
   * failure says so, else what `handleFailure` decides.
   */
  async failureOutcome(item: T, failure: unknown, ctx: AttemptContext, signal: AttemptSignal, durationMs: number): Promise<AttemptOutcome> {
    // ctx.transaction already committed the success: whatever happened after it cannot change that.
    if (ctx.completedInTransaction) return { kind: "succeeded", result: undefined, resultJson: null, inTransaction: true, durationMs };
    const code = errorCodeOf(failure);
    // Only the signal says the job was cancelled: a handler's own error with that code is a failure like any other.
    const reason = signal.reason;
    if (code === ErrorCode.Cancelled && reason !== undefined && failure === reason) return { kind: "cancelled", error: reason, started: true, durationMs };
    if (code === ErrorCode.LeaseLost) return { kind: "lease-lost", error: coerceError(failure), started: true, durationMs };
    if (code === ErrorCode.Shutdown) return { kind: "released", started: true, durationMs };
    if (code === ErrorCode.Snooze) return { kind: "snoozed", delayMs: (failure as SnoozeError).delayMs, durationMs };
    const decision = await this.#decide(item, failure, ctx);
    return decision.action === "retry"
      ? { kind: "retry", delayMs: decision.delayMs, error: failure, durationMs }
      : { kind: "dead", error: decision.error ?? failure, durationMs };
  }

  /** Aborts the attempt with `JobTimeoutError` after `timeoutMs` (no timer at all for a job without a timeout). */
  #startTimeout(timeoutMs: number | null, signal: AttemptSignal): AbortController | undefined {
    if (timeoutMs === null) return undefined;
    const cancel = new AbortController();
    void this.#options.clock.sleep(timeoutMs, cancel.signal).then(() => {
      if (!cancel.signal.aborted) signal.abort(new JobTimeoutError(timeoutMs));
    });
    return cancel;
  }

  /** `handleFailure`'s answer, checked: a throw or an unusable delay makes the job dead with that reason. */
  async #decide(item: T, failure: unknown, ctx: AttemptContext): Promise<FailureDecision & { readonly error?: Error }> {
    let decision: FailureDecision;
    try {
      decision = await this.#hooks.decide(item, failure, ctx);
    } catch (thrown) {
      const error = coerceError(thrown);
      ctx.log.error(`handleFailure threw (${error.message}); the job is dead`);
      return {
        action: "dead",
        error: new HookError(`handleFailure threw while handling "${coerceError(failure).message}": ${error.message}`, { cause: failure }),
      };
    }
    if (decision?.action === "dead") return decision;
    if (decision?.action === "retry" && Number.isFinite(decision.delayMs) && decision.delayMs >= 0) {
      return { action: "retry", delayMs: Math.round(decision.delayMs) };
    }
    const error = new HookError(
      `handleFailure must return { action: "dead" } or { action: "retry", delayMs } with a finite delayMs ≥ 0, got ${safeJson(decision)}`,
      { cause: failure },
    );
    ctx.log.error(`${error.message}; the job is dead`);
    return { action: "dead", error };
  }
}

/** Each attempt's result; the jobs settled together share one object (results are read, never changed). */
function resultsOf(outcomes: readonly SucceededOutcome[], written: readonly WriteResult[]): AttemptResult[] {
  const results = new Array<AttemptResult>(outcomes.length);
  let last: AttemptResult | undefined;
  for (let index = 0; index < outcomes.length; index += 1) {
    const outcome = outcomes[index]!;
    const one = written[index]!;
    if (last?.outcome !== outcome || last.written !== one) last = { outcome, written: one };
    results[index] = last;
  }
  return results;
}

/**
 * Nothing ran: the job was cancelled, or the lease lapsed, while the
 * attempt waited in the buffer or the claim's answer arrived late.
 */
export function stoppedBeforeStart(signal: AttemptSignal): AttemptOutcome {
  const error = signal.reason ?? new LeaseLostError("the lease ran out before the attempt started");
  signal.abort(error);
  if (errorCodeOf(error) === ErrorCode.Cancelled) return { kind: "cancelled", error, started: false, durationMs: 0 };
  return { kind: "lease-lost", error, started: false, durationMs: 0 };
}

/** A parse that threw: dead at once, with a `ParseError` (the thrown one, or one wrapping it). */
export function parseFailed(thrown: unknown, durationMs: number): AttemptOutcome {
  const cause = coerceError(thrown);
  const error = hasErrorCode(cause, ErrorCode.Parse) ? cause : new ParseError(`invalid payload: ${cause.message}`, { cause });
  return { kind: "dead", error, durationMs };
}

function throwIt(reason: Error): never {
  throw reason;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
