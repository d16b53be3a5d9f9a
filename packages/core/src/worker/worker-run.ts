import { coerceError } from "../errors/coerce-error";
import { ShutdownError } from "../errors/job-errors";
import type { ClaimedJob } from "../job/job-record";
import type { Logger } from "../logging/logger";
import type { RunEvents } from "../events/run-events";
import type { JobStore } from "../store/job-store";
import { AttemptExecutor, type Attempt, type AttemptResult, type JobHooks } from "./attempt-executor";
import { ClaimFlushes } from "./claim-flushes";
import { DeadHookRunner, type DeadHook } from "./dead-hook-runner";
import { LeaseKeeper } from "./lease-keeper";
import { OutcomeRecorder } from "./outcome-recorder";
import { PrefetchSizer } from "./prefetch-sizer";
import { POLL_INTERVAL_LIMITS, type RunOptions } from "./run-options";
import { failureStopReason, newRunCounters, type RunCounters, type RunSummary, type StopReason } from "./run-summary";
import { settleWithin } from "./settle-within";
import { StoreRetryPolicy } from "./store-retry-policy";
import { WakeUp } from "./wake-up";
import type { ResolvedWorkerOptions } from "./worker-options";

/** First idle wait in loop mode; it doubles up to `pollIntervalMs`. */
const FIRST_IDLE_WAIT_MS = 50;

/** After shutdown, longest wait for the writes that give jobs back (bounded further by the lease). */
const GIVE_BACK_MS = 5_000;

/** How long claims are retried through an outage before the run gives up. */
const CLAIM_GIVE_UP_MS = 60_000;
/** Longest time between two claims that look for jobs whose lease expired (shorter for leases under 4 s). */
const TAKE_OVER_EVERY_MS = 1_000;
/** The reason an idle wait's timer is cancelled with (a reason of our own: no exception is built). */
const IDLE_OVER = "idle wait over";

/** Shortest time between two reads of the queue's controls on wake-ups that come while the buffer is full. */
const CONTROLS_READ_EVERY_MS = 50;

/** How often a busy run writes an `info` summary of what it did since the last one. */
export const PROGRESS_EVERY_MS = 30_000;

interface RunParts<T> {
  readonly store: JobStore;
  readonly log: Logger;
  readonly options: ResolvedWorkerOptions;
  readonly workerId: string;
  readonly queue: string;
  readonly hooks: JobHooks<T>;
  /** The worker's `onDead`, run for the queue's deaths outside the handler slots (see {@link DeadHookRunner}). */
  readonly onDead: DeadHook;
  readonly events: RunEvents;
}

interface Started {
  readonly attempt: Attempt;
  readonly done: Promise<void>;
}

/**
 * One run of a worker over its queue. It claims up to `concurrency +
 * prefetch` jobs in one statement (the prefetch follows the handlers' pace;
 * see {@link PrefetchSizer}), keeps those it cannot start yet in a local
 * buffer under lease (heartbeats extend them too), starts a buffered job the
 * moment a handler slot frees up, and claims again while the buffer still
 * holds half the prefetch, so slots do not wait for a round trip. It
 * stops when no due job is left (drain mode; loop mode waits for a wake-up
 * or the next poll instead), a budget is spent or its signal aborts; buffered
 * jobs then go back to the queue at once without spending their attempt.
 */
export class WorkerRun<T> {
  readonly #parts: RunParts<T>;
  readonly #counters: RunCounters = newRunCounters();
  readonly #leases: LeaseKeeper;
  readonly #recorder: OutcomeRecorder;
  readonly #executor: AttemptExecutor<T>;
  readonly #policy: StoreRetryPolicy;
  readonly #deadHooks: DeadHookRunner;
  /** Which claims are known to be on disk (see `WorkerOptions.durableClaims`). */
  readonly #flushes = new ClaimFlushes();
  /** Claimed and not started, oldest first. */
  readonly #buffer: Attempt[] = [];
  /**
   * The latest started attempt of each job not yet recorded, by job id. A
   * newer attempt of a job whose older attempt is still here waits for it,
   * so one process never runs a job twice at once.
   */
  readonly #started = new Map<string, Started>();
  /** Handlers running now: what `concurrency` bounds. An attempt whose outcome is being written no longer counts. */
  #running = 0;
  /** Attempts recorded so far; a claim that raced a recording must not conclude "drained". */
  #recorded = 0;
  /** Attempts recorded so far whose outcome puts the job back in the queue (a retry, a snooze, a give-back): one may be due at once. */
  #requeued = 0;
  #stopping = false;
  /**
   * A claim the stop abandoned while its statement was in flight, and when
   * it was sent: the server may still commit it, so whatever it claimed is
   * given back with the buffer once it answers.
   */
  #abandonedClaim: { readonly jobs: Promise<readonly ClaimedJob[]>; readonly sentAt: number } | undefined;
  /** The timer of the last idle wait, until it is cancelled (see {@link #idle}). */
  #idleTimer: AbortController | undefined;
  /** Woken when a slot frees up, a job is recorded or a wake-up arrives. */
  readonly #nudge = new WakeUp();
  /** How many claimed jobs to hold ahead of the slots. */
  readonly #prefetch: PrefetchSizer;
  /** How often a claim also takes over jobs whose lease expired: a quarter of the lease, at most a second. */
  readonly #takeOverEveryMs: number;
  /** When a claim last took over expired leases. */
  #tookOverAt = -Infinity;
  /** A wake-up came from outside (a job enqueued, a control changed) since the last look at the queue's controls. */
  #wokenFromOutside = false;
  /** When the controls were last read for a wake-up that came while no claim could be sent. */
  #controlsReadAt = -Infinity;
  /** Whether the last claim found the queue paused (logged once per pause). */
  #paused = false;

  constructor(parts: RunParts<T>) {
    this.#parts = parts;
    const { store, options, workerId, log, hooks, events } = parts;
    // A store call that failed for the connection's sake may mean the database crashed: stop unflushed claims first.
    this.#policy = new StoreRetryPolicy(options.clock, (error) => this.#leases.abortUnflushed(error.message));
    this.#takeOverEveryMs = Math.min(TAKE_OVER_EVERY_MS, Math.floor(options.leaseMs / 4));
    this.#prefetch = options.adaptivePrefetch ? PrefetchSizer.adaptive(options.prefetch, options.clock) : PrefetchSizer.fixed(options.prefetch);
    this.#leases = new LeaseKeeper(store, options, workerId, log, this.#flushes);
    const { queue, onDead } = parts;
    this.#deadHooks = new DeadHookRunner({
      store,
      queue,
      workerId,
      log,
      options,
      events,
      policy: this.#policy,
      secretFields: hooks.secretFields,
      hook: onDead,
    });
    this.#recorder = new OutcomeRecorder({
      store,
      workerId,
      secretFields: hooks.secretFields,
      policy: this.#policy,
      leaseMs: options.leaseMs,
      log,
      events,
      died: (job, error) => this.#deadHooks.died(job, error),
      flushes: this.#flushes,
    });
    this.#executor = new AttemptExecutor({ store, workerId, log, options, hooks, leases: this.#leases, recorder: this.#recorder, events });
  }

  /** Runs until drained, a budget is spent or the signal aborts; never rejects. */
  async run(runOptions: RunOptions): Promise<RunSummary> {
    const { clock, leaseMs } = this.#parts.options;
    const started = clock.now();
    const stop = new AbortController();
    // A stop wakes the claim loop wherever it waits.
    stop.signal.addEventListener("abort", () => this.#nudge.wake(), { once: true });
    const onSignal = (): void => stop.abort("signal" satisfies StopReason);
    runOptions.signal?.addEventListener("abort", onSignal, { once: true });
    if (runOptions.signal?.aborted) onSignal();
    const deadline = runOptions.maxRuntimeMs === undefined ? undefined : started + runOptions.maxRuntimeMs;
    const timer = runOptions.maxRuntimeMs === undefined ? undefined : setTimeout(() => stop.abort("max-runtime" satisfies StopReason), runOptions.maxRuntimeMs);
    const wakeups = await this.#subscribe(runOptions);
    this.#leases.start();
    this.#deadHooks.start();
    const runOver = new AbortController();
    const progress = this.#reportProgress(runOver.signal);
    let stoppedBecause: StopReason;
    let error: string | undefined;
    try {
      stoppedBecause = await this.#claimLoop(runOptions, stop.signal, deadline);
    } catch (thrown) {
      stoppedBecause = failureStopReason(thrown);
      error = coerceError(thrown).message;
    }
    this.#stopping = true;
    this.#cancelIdleTimer();
    const givingBack = this.#giveBackBuffered();
    await this.#finishStarted(stop.signal, runOptions.shutdownTimeoutMs ?? this.#parts.options.shutdownTimeoutMs);
    // A drained run also runs the queue's pending onDead hooks (within its budget); a stopped one lets running hooks finish.
    await this.#deadHooks.stop(stoppedBecause === "drained" ? "when-empty" : "now", stop.signal);
    clearTimeout(timer);
    runOptions.signal?.removeEventListener("abort", onSignal);
    // Writes and closes on a connection that stopped answering must not keep a stopping worker alive.
    const giveBackMs = Math.min(GIVE_BACK_MS, leaseMs);
    await settleWithin(Promise.all([givingBack, this.#allStarted(), wakeups?.close(), this.#recorder.drain()]), giveBackMs, clock);
    await this.#leases.stop();
    runOver.abort();
    await progress;
    return Object.freeze({
      queue: this.#parts.queue,
      workerId: this.#parts.workerId,
      ...this.#counters,
      durationMs: clock.now() - started,
      stoppedBecause,
      ...(error === undefined ? {} : { error }),
    });
  }

  /**
   * Every {@link PROGRESS_EVERY_MS} while the run is on, one `info` line
   * with what happened since the last one (nothing when nothing did): the
   * per-job lines are `debug`, so this is what a normal log shows of a busy
   * worker.
   */
  async #reportProgress(stop: AbortSignal): Promise<void> {
    const { clock } = this.#parts.options;
    let last: RunCounters = { ...this.#counters };
    while (!stop.aborted) {
      await clock.sleep(PROGRESS_EVERY_MS, stop);
      if (stop.aborted) return;
      const now = { ...this.#counters };
      const done = now.succeeded - last.succeeded + now.retried - last.retried + now.dead - last.dead;
      if (now.claimed !== last.claimed || done > 0) {
        const delta = (key: keyof RunCounters): number => now[key] - last[key];
        this.#parts.log.info(
          `Worked on ${this.#parts.queue}: ${delta("succeeded")} succeeded, ${delta("retried")} retried, ${delta("dead")} dead, ` +
            `${delta("leaseLost")} lease lost, ${delta("cancelled")} cancelled in the last ${PROGRESS_EVERY_MS / 1_000} s (${Math.round((delta("succeeded") * 1_000) / PROGRESS_EVERY_MS)}/s); ` +
            `${this.#running} running, ${this.#buffer.length} waiting in the buffer`,
          {
            succeeded: delta("succeeded"),
            retried: delta("retried"),
            dead: delta("dead"),
            leaseLost: delta("leaseLost"),
            cancelled: delta("cancelled"),
            running: this.#running,
            buffered: this.#buffer.length,
          },
        );
      }
      last = now;
    }
  }

  async #subscribe({ mode, wakeups }: RunOptions): Promise<{ close(): Promise<void> } | undefined> {
    if (mode !== "loop" || wakeups === undefined) return undefined;
    try {
      return await wakeups.subscribe(
        [this.#parts.queue],
        () => {
          this.#wokenFromOutside = true;
          this.#nudge.wake();
        },
        // The listening connection dropped, as every connection does when the server crashes.
        () => this.#leases.abortUnflushed("the wake-up connection was lost"),
        // An operator cancelled a running job of the queue: stop its handler if it is one of this worker's.
        (cancelled) => {
          if (cancelled.workerId === this.#parts.workerId) this.#leases.cancel(cancelled);
        },
      );
    } catch (thrown) {
      this.#parts.log.warn(`Could not subscribe to wake-ups, polling only: ${coerceError(thrown).message}`, { queue: this.#parts.queue });
      return undefined;
    }
  }

  async #claimLoop(runOptions: RunOptions, stop: AbortSignal, deadline: number | undefined): Promise<StopReason> {
    const { store, options, workerId, queue, log } = this.#parts;
    const { maxJobs, mode = "drain", pollIntervalMs = POLL_INTERVAL_LIMITS.default } = runOptions;
    let idleWaitMs = FIRST_IDLE_WAIT_MS;
    let drainedAt: number | undefined;
    for (;;) {
      if (stop.aborted) return stop.reason as StopReason;
      const budget = maxJobs === undefined ? Infinity : maxJobs - this.#counters.claimed;
      if (budget <= 0 && this.#buffer.length === 0) return "max-jobs";
      // Claim again once the buffer is down to half the prefetch: the slots never wait for a round trip, and a
      // claim takes at least half the prefetch at a time.
      const ahead = this.#prefetch.target();
      const room = Math.min(options.concurrency + ahead - this.#running - this.#buffer.length, budget);
      if (room <= 0 || this.#buffer.length > Math.floor(ahead / 2)) {
        // No claim goes out now, so a pause would not be seen until one does: look at the controls on a wake-up.
        if (this.#wokenFromOutside && this.#buffer.length > 0) await this.#giveBackIfPaused();
        await this.#nudge.wait();
        continue;
      }
      this.#wokenFromOutside = false;
      // A process resumed after a pause stops its lapsed handlers before it takes more work.
      this.#leases.expireLapsed();
      let sentAt = options.clock.now();
      const requeuedBefore = this.#requeued;
      if (deadline !== undefined && deadline - sentAt <= 0) return "max-runtime";
      // Expired leases are looked for every so often, not on every claim: the look costs the store a scan.
      const takeOverExpired = sentAt - this.#tookOverAt >= this.#takeOverEveryMs;
      if (takeOverExpired) this.#tookOverAt = sentAt;
      let sent: Promise<readonly ClaimedJob[]> | undefined;
      const jobs = await this.#policy.run(
        () => {
          // Each try counts the lease (and the run's remaining time) from when it is sent: a claim retried
          // through an outage must not hold the jobs it finally takes against the first try's clock.
          sentAt = options.clock.now();
          const maxTimeoutMs = deadline === undefined ? undefined : Math.max(0, deadline - sentAt);
          return (sent = store.claimBatch({
            queue,
            workerId,
            limit: room,
            leaseMs: options.leaseMs,
            takeOverExpired,
            synchronousCommit: options.durableClaims,
            ...(maxTimeoutMs === undefined ? {} : { maxTimeoutMs }),
          }));
        },
        { giveUpAfterMs: CLAIM_GIVE_UP_MS, signal: stop, onRetry: (message) => log.warn(`Claim failed, retrying: ${message}`, { queue, workerId }) },
      );
      if (jobs === undefined) {
        if (sent !== undefined) this.#abandonedClaim = { jobs: sent, sentAt };
        return stop.reason as StopReason;
      }
      this.#counters.claimed += jobs.length;
      const claim = this.#flushes.claimed(options.durableClaims || jobs.length === 0);
      for (const job of jobs) {
        const earlier = this.#started.get(job.id);
        // The same attempt again: a database crash undid the claim of the earlier run (see `WorkerOptions.durableClaims`)
        // and the job's row is this claim's now, so the earlier run stops at once and writes nothing.
        if (earlier?.attempt.job.attempt === job.attempt) this.#executor.supersede(earlier.attempt);
        this.#buffer.push(this.#executor.claimed(job, sentAt, claim));
      }
      this.#leases.expireLapsed();
      this.#startBuffered();
      this.#cancelIdleTimer();
      if (jobs.length === room) {
        idleWaitMs = FIRST_IDLE_WAIT_MS;
        this.#paused = false;
        continue;
      }
      const { hold } = jobs;
      if (hold?.paused === true) {
        await this.#pausedClaim();
        if (mode === "drain" && this.#started.size === 0) return "drained";
        await this.#idle(pollIntervalMs);
        continue;
      }
      this.#paused = false;
      if (hold !== undefined && jobs.length === 0) {
        // A running cap or a rate limit held the claim back: ask again when it may give more, or when a slot frees up.
        idleWaitMs = FIRST_IDLE_WAIT_MS;
        await this.#idle(Math.min(hold.retryAfterMs ?? pollIntervalMs, pollIntervalMs));
        continue;
      }
      if (jobs.length > 0) {
        // The queue had fewer due jobs than there was room for: wait for a slot or a wake-up before asking again.
        idleWaitMs = FIRST_IDLE_WAIT_MS;
        await this.#nudge.wait();
        continue;
      }
      // A retry written while this claim ran may already be due: look again before concluding.
      if (this.#requeued !== requeuedBefore) continue;
      // An attempt whose outcome is still being written may schedule a retry that is due at once.
      if (this.#started.size > 0 || this.#buffer.length > 0) {
        await this.#nudge.wait();
      } else if (mode === "drain") {
        this.#parts.events.queueDrained();
        return "drained";
      } else {
        // Once per idle spell: the first empty claim after something was recorded (or after the start).
        if (drainedAt !== this.#recorded) this.#parts.events.queueDrained();
        drainedAt = this.#recorded;
        await this.#idle(idleWaitMs);
        idleWaitMs = Math.min(idleWaitMs * 2, pollIntervalMs);
      }
    }
  }

  /**
   * Waits until a wake-up, a finished job, `ms` passing or `stop` (which
   * wakes the nudge). Its timer is cancelled once the claim the wake-up
   * leads to has started its jobs (see {@link #cancelIdleTimer}), not at once:
   * aborting a signal dispatches an event, and even deferred with
   * `setImmediate` that lengthened the path from a wake-up to the claim's
   * send on a worker idle between jobs (see docs/benchmarks.md, Figures
   * behind the code).
   */
  async #idle(ms: number): Promise<void> {
    this.#cancelIdleTimer();
    const { woken, cancel } = this.#nudge.waiter();
    const timer = new AbortController();
    this.#idleTimer = timer;
    await Promise.race([woken, this.#parts.options.clock.sleep(ms, timer.signal)]);
    cancel();
  }

  /** Cancels the timer of the last idle wait, if it may still be pending. */
  #cancelIdleTimer(): void {
    const timer = this.#idleTimer;
    this.#idleTimer = undefined;
    timer?.abort(IDLE_OVER);
  }

  /** Starts buffered attempts while handler slots are free. */
  #startBuffered(): void {
    while (!this.#stopping && this.#running < this.#parts.options.concurrency && this.#buffer.length > 0) {
      this.#start(this.#buffer.shift()!);
    }
  }

  #start(attempt: Attempt): void {
    const { job } = attempt;
    this.#running += 1;
    // The claim handed over a newer attempt of a job whose older attempt this
    // process still runs (its lease lapsed while the process was paused): the
    // older one is aborted already; the newer one starts once it has settled.
    const previous = this.#started.get(job.id)?.done;
    const freeSlot = (): void => {
      this.#running -= 1;
      this.#prefetch.finished();
      this.#startBuffered();
      this.#nudge.wake();
    };
    const run = previous === undefined ? this.#executor.run(attempt, freeSlot) : previous.then(() => this.#executor.run(attempt, freeSlot));
    const done = run.then((result) => {
      this.#count(result);
      if (this.#started.get(job.id)?.attempt === attempt) this.#started.delete(job.id);
      this.#recorded += 1;
      if (result.written !== "cancelled" && result.outcome.kind !== "succeeded" && result.outcome.kind !== "dead") this.#requeued += 1;
      this.#nudge.wake();
    });
    this.#started.set(job.id, { attempt, done });
  }

  /** The one place the run's counters change. */
  #count({ outcome, written }: AttemptResult): void {
    const counters = this.#counters;
    if (written === "failed") counters.writeFailed += 1;
    else if (written === "fence-missed") counters.leaseLost += 1;
    else if (written === "cancelled") counters.cancelled += 1;
    else if (outcome.kind === "succeeded") counters.succeeded += 1;
    else if (outcome.kind === "retry") counters.retried += 1;
    else if (outcome.kind === "snoozed") counters.snoozed += 1;
    else if (outcome.kind === "dead") counters.dead += 1;
    else if (outcome.kind === "lease-lost") counters.leaseLost += 1;
    else counters.released += 1;
  }

  /**
   * Hands every buffered attempt back at once: none of them started. So are
   * the jobs of a claim the stop abandoned in flight, once it answers.
   */
  async #giveBackBuffered(): Promise<void> {
    const buffered = this.#giveBack(this.#buffer.splice(0));
    const abandoned = this.#abandonedClaim;
    if (abandoned !== undefined) {
      const late = await abandoned.jobs.catch(() => [] as readonly ClaimedJob[]);
      this.#counters.claimed += late.length;
      await this.#giveBack(late.map((job) => this.#executor.claimed(job, abandoned.sentAt)));
    }
    await buffered;
  }

  /** Gives `attempts` (never started) back to the queue without spending them. */
  #giveBack(attempts: readonly Attempt[]): Promise<unknown> {
    return Promise.all(attempts.map((attempt) => this.#executor.giveBack(attempt).then((result) => this.#count(result))));
  }

  /** A claim found the queue paused: buffered jobs go back (they must not start), running ones finish. */
  async #pausedClaim(): Promise<void> {
    if (!this.#paused) this.#parts.log.info(`Queue ${this.#parts.queue} is paused: claiming nothing until it is resumed`, { queue: this.#parts.queue });
    this.#paused = true;
    await this.#giveBack(this.#buffer.splice(0));
  }

  /**
   * A wake-up came while the buffer was full: the queue may have been
   * paused, so the controls are read (at most every {@link CONTROLS_READ_EVERY_MS})
   * and a paused queue's buffered jobs go back.
   */
  async #giveBackIfPaused(): Promise<void> {
    const { store, options, queue, log } = this.#parts;
    const now = options.clock.now();
    if (now - this.#controlsReadAt < CONTROLS_READ_EVERY_MS) return;
    this.#controlsReadAt = now;
    this.#wokenFromOutside = false;
    try {
      const controls = (await store.listQueueControls()).find((entry) => entry.queue === queue);
      if (controls?.paused === true) await this.#pausedClaim();
    } catch (thrown) {
      log.debug(`Could not read the controls of ${queue}: ${coerceError(thrown).message}`, { queue });
    }
  }

  /**
   * Lets started attempts finish; once `signal` has aborted, gives them
   * `shutdownTimeoutMs`, then aborts the rest with `ShutdownError` (they are
   * given back; the run waits a bounded time for those writes).
   */
  async #finishStarted(signal: AbortSignal, shutdownTimeoutMs: number): Promise<void> {
    if (this.#started.size === 0) return;
    await Promise.race([this.#allStarted(), this.#whenAborted(signal)]);
    if (this.#started.size === 0) return;
    await settleWithin(this.#allStarted(), shutdownTimeoutMs, this.#parts.options.clock);
    for (const { attempt } of this.#started.values()) attempt.signal.abort(new ShutdownError());
  }

  /** Settles when every attempt started by now is recorded (older attempts are chained into newer ones). */
  #allStarted(): Promise<unknown> {
    return Promise.all([...this.#started.values()].map((entry) => entry.done));
  }

  /** Resolves when `signal` aborts (never otherwise). */
  #whenAborted(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }
}
