import { coerceError } from "../errors/coerce-error";
import { LeaseLostError, ShutdownError } from "../errors/job-errors";
import type { ClaimedJob } from "../job/job-record";
import type { Logger } from "../logging/logger";
import type { JobStore } from "../store/job-store";
import { runAttempt, type AttemptOutcome, type JobHooks } from "./attempt-runner";
import { createAttemptContext } from "./attempt-context";
import { LeaseKeeper } from "./lease-keeper";
import { OutcomeRecorder } from "./outcome-recorder";
import type { RunOptions } from "./run-options";
import { newRunCounters, type RunCounters, type RunSummary, type StopReason } from "./run-summary";
import type { ResolvedWorkerOptions } from "./worker-options";
import { settleWithin } from "./settle-within";
import { WakeUp } from "./wake-up";
import { WriteRetrier } from "./write-retrier";

/** First idle wait in loop mode; it doubles up to `pollIntervalMs`. */
const FIRST_IDLE_WAIT_MS = 50;

/** After shutdown, longest wait for the writes that give jobs back (bounded further by the lease). */
const GIVE_BACK_MS = 5_000;

interface InFlight {
  readonly attempt: number;
  readonly controller: AbortController;
  readonly done: Promise<void>;
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
 * when no due job is left (drain mode; loop mode waits for a wake-up or the
 * next poll instead), a budget is spent or its signal aborts.
 */
export class WorkerRun<T> {
  readonly #parts: RunParts<T>;
  readonly #counters: RunCounters = newRunCounters();
  /**
   * The latest attempt of each job claimed and not yet recorded, by job id,
   * with the means to abort its handler. A newer attempt of a job whose older
   * attempt is still here waits for it, so one process never runs a job twice at once.
   */
  readonly #inFlight = new Map<string, InFlight>();
  /** Handlers running now: what `concurrency` bounds. A job whose outcome is being written no longer holds a slot. */
  #busySlots = 0;
  /** How many claimed jobs have been fully recorded; a claim that raced a recording must not conclude "drained". */
  #recorded = 0;
  readonly #leases: LeaseKeeper;
  readonly #outcomes: OutcomeRecorder<T>;
  /** Retries claims through an outage for up to a minute. */
  readonly #claims: WriteRetrier;
  /** Opened when a slot frees up, a job is recorded or a wake-up arrives. */
  readonly #nudge = new WakeUp();

  constructor(parts: RunParts<T>) {
    this.#parts = parts;
    const { store, options, workerId, log } = parts;
    this.#leases = new LeaseKeeper(store, options, workerId, log);
    this.#outcomes = new OutcomeRecorder(store, workerId, options, parts.hooks, this.#counters, log);
    this.#claims = new WriteRetrier(options.clock, 60_000);
  }

  /** Runs until drained, a budget is spent or the signal aborts; never rejects. */
  async run(runOptions: RunOptions): Promise<RunSummary> {
    const { clock } = this.#parts.options;
    const started = clock.now();
    const stop = new AbortController();
    const onSignal = (): void => stop.abort("signal" satisfies StopReason);
    runOptions.signal?.addEventListener("abort", onSignal, { once: true });
    if (runOptions.signal?.aborted) onSignal();
    const deadline = runOptions.maxRuntimeMs === undefined ? undefined : started + runOptions.maxRuntimeMs;
    const timer =
      runOptions.maxRuntimeMs === undefined ? undefined : setTimeout(() => stop.abort("max-runtime" satisfies StopReason), runOptions.maxRuntimeMs);
    const wakeups = await this.#subscribe(runOptions);
    this.#leases.start();
    let stoppedBecause: StopReason;
    let error: string | undefined;
    try {
      stoppedBecause = await this.#claimLoop(runOptions, stop.signal, deadline);
    } catch (thrown) {
      stoppedBecause = "infrastructure";
      error = coerceError(thrown).message;
    }
    await this.#finishInFlight(stop.signal, runOptions.shutdownTimeoutMs ?? this.#parts.options.shutdownTimeoutMs);
    clearTimeout(timer);
    runOptions.signal?.removeEventListener("abort", onSignal);
    // Writes and closes on a connection that stopped answering must not keep a stopping worker alive.
    const giveBackMs = Math.min(GIVE_BACK_MS, this.#parts.options.leaseMs);
    await settleWithin(Promise.all([this.#allInFlight(), wakeups?.close(), this.#outcomes.drain()]), giveBackMs, clock);
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

  async #subscribe({ mode, wakeups }: RunOptions): Promise<{ close(): Promise<void> } | undefined> {
    if (mode !== "loop" || wakeups === undefined) return undefined;
    try {
      return await wakeups.subscribe([this.#parts.queue], () => this.#nudge.wake());
    } catch (thrown) {
      this.#parts.log.warn(`Could not subscribe to wake-ups, polling only: ${coerceError(thrown).message}`, { queue: this.#parts.queue });
      return undefined;
    }
  }

  async #claimLoop(runOptions: RunOptions, stop: AbortSignal, deadline: number | undefined): Promise<StopReason> {
    const { store, options, workerId, queue } = this.#parts;
    const { maxJobs, mode = "drain", pollIntervalMs = 2_000 } = runOptions;
    let idleWaitMs = FIRST_IDLE_WAIT_MS;
    for (;;) {
      if (stop.aborted) return stop.reason as StopReason;
      const budget = maxJobs === undefined ? Infinity : maxJobs - this.#counters.claimed;
      if (budget <= 0) return "max-jobs";
      const free = Math.min(options.concurrency - this.#busySlots, budget);
      if (free <= 0) {
        await this.#nudge.wait(stop);
        continue;
      }
      // A process resumed after a pause stops its lapsed handlers before it takes more work.
      this.#leases.expireLapsed();
      const claimedAt = options.clock.now();
      const recordedBefore = this.#recorded;
      const maxTimeoutMs = deadline === undefined ? undefined : deadline - claimedAt;
      if (maxTimeoutMs !== undefined && maxTimeoutMs <= 0) return "max-runtime";
      const jobs = await this.#claims.run(
        () => store.claimBatch({ queue, workerId, limit: free, leaseMs: options.leaseMs, ...(maxTimeoutMs === undefined ? {} : { maxTimeoutMs }) }),
        stop,
        (message) => this.#parts.log.warn(`Claim failed, retrying: ${message}`, { queue, workerId }),
      );
      if (jobs === undefined) return stop.reason as StopReason;
      this.#leases.expireLapsed();
      this.#counters.claimed += jobs.length;
      for (const job of jobs) this.#launch(job, claimedAt);
      if (jobs.length > 0) {
        idleWaitMs = FIRST_IDLE_WAIT_MS;
        // Let finishing jobs free their slots so the next claim takes several at once.
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      // A retry written while this claim ran may already be due: look again before concluding.
      if (this.#recorded !== recordedBefore) continue;
      if (this.#inFlight.size > 0) {
        await this.#nudge.wait(stop);
      } else if (mode === "drain") {
        return "drained";
      } else {
        await this.#idle(idleWaitMs, stop);
        idleWaitMs = Math.min(idleWaitMs * 2, pollIntervalMs);
      }
    }
  }

  /** Waits until a wake-up, a finished job, `ms` passing or `stop`. */
  async #idle(ms: number, stop: AbortSignal): Promise<void> {
    const done = new AbortController();
    const either = AbortSignal.any([stop, done.signal]);
    await Promise.race([this.#nudge.wait(either), this.#parts.options.clock.sleep(ms, either)]);
    done.abort();
  }

  #launch(job: ClaimedJob, claimedAt: number): void {
    const controller = new AbortController();
    this.#leases.hold(job, controller, claimedAt);
    this.#busySlots += 1;
    // The claim handed over a newer attempt of a job whose older attempt this
    // process still runs (its lease lapsed while the process was paused): the
    // older one is aborted already; the newer one starts once it has settled.
    const previous = this.#inFlight.get(job.id)?.done ?? Promise.resolve();
    const done = previous.then(() => this.#execute(job, controller)).finally(() => {
      this.#leases.release(job);
      if (this.#inFlight.get(job.id)?.attempt === job.attempt) this.#inFlight.delete(job.id);
      this.#recorded += 1;
      this.#nudge.wake();
    });
    this.#inFlight.set(job.id, { attempt: job.attempt, controller, done });
  }

  async #execute(job: ClaimedJob, controller: AbortController): Promise<void> {
    const { store, workerId, log } = this.#parts;
    const { ctx, state } = createAttemptContext({ store, workerId, log, job, signal: controller.signal, secretFields: this.#parts.hooks.secretFields });
    const outcome = this.#leases.holds(job)
      ? await runAttempt(this.#parts.hooks, ctx, controller, this.#parts.options.clock)
      : notStarted<T>(controller);
    this.#busySlots -= 1;
    this.#nudge.wake();
    try {
      await this.#outcomes.record(job, outcome, ctx, state);
    } catch (thrown) {
      this.#counters.writeFailed += 1;
      ctx.log.error(`Could not record the outcome of job ${job.id}: ${coerceError(thrown).message}; it will run again when its lease expires`);
    }
  }

  /**
   * Lets in-flight attempts finish; once `signal` has aborted, gives them
   * `shutdownTimeoutMs`, then aborts the rest with `ShutdownError` (they are
   * given back; the run waits a bounded time for those writes).
   */
  async #finishInFlight(signal: AbortSignal, shutdownTimeoutMs: number): Promise<void> {
    if (this.#inFlight.size === 0) return;
    const { clock } = this.#parts.options;
    await Promise.race([this.#allInFlight(), this.#whenAborted(signal)]);
    if (this.#inFlight.size === 0) return;
    await settleWithin(this.#allInFlight(), shutdownTimeoutMs, clock);
    for (const { controller } of this.#inFlight.values()) controller.abort(new ShutdownError());
  }

  /** Settles when every attempt in flight now is recorded (older attempts are chained into newer ones). */
  #allInFlight(): Promise<unknown> {
    return Promise.all([...this.#inFlight.values()].map((entry) => entry.done));
  }

  /** Resolves when `signal` aborts (never otherwise). */
  #whenAborted(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }
}

/**
 * The outcome of an attempt whose lease lapsed before its handler could
 * start (the claim's answer arrived after a pause): nothing ran, so the job
 * is given back without spending the attempt.
 */
function notStarted<T>(controller: AbortController): AttemptOutcome<T> {
  if (!controller.signal.aborted) controller.abort(new LeaseLostError("the lease ran out before the attempt started"));
  return { kind: "not-started", durationMs: 0 };
}
