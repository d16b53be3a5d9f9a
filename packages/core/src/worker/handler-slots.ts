import { ShutdownError } from "../errors/job-errors";
import type { ClaimedJob } from "../job/job-record";
import type { Clock } from "../time/clock";
import type { Attempt, AttemptExecutor, AttemptResult } from "./attempt-executor";
import type { BatchExecutor } from "./batch-executor";
import { BatchLease } from "./batch-lease";
import type { LeaseKeeper } from "./lease-keeper";
import type { PrefetchSizer } from "./prefetch-sizer";
import { newRunCounters, type RunCounters } from "./run-summary";
import type { WakeUp } from "./wake-up";

/** What {@link HandlerSlots} works with. */
export interface HandlerSlotsParts<T> {
  readonly executor: AttemptExecutor<T>;
  /** How many handlers may run at once. */
  readonly concurrency: number;
  /** Told of every job a handler finishes (it sizes the buffer by their pace). */
  readonly prefetch: PrefetchSizer;
  /** Woken when a slot frees up or an attempt is recorded: the claim loop may have room again. */
  readonly nudge: WakeUp;
  /** Present when a slot runs batches (`batchSize` above 1) instead of single attempts. */
  readonly batches?: BatchSlots<T>;
  /** Told of every outcome recorded, after `nudge` (the run's drain group hears of it so). */
  readonly onRecorded?: () => void;
}

/** How slots that run batches fill them. */
export interface BatchSlots<T> {
  readonly executor: BatchExecutor<T>;
  /** The most attempts in one batch. */
  readonly size: number;
  /** How long a batch short of `size` waits for more claimed attempts. */
  readonly waitMs: number;
  readonly clock: Clock;
  /** Holds each batch's one lease from its claim. */
  readonly leases: LeaseKeeper;
}

/** The reason a batch's fill timer is cancelled with when the run stops. */
const NO_MORE_BATCHES = "no more batches start";

interface Started {
  readonly attempt: Attempt;
  readonly done: Promise<void>;
}

/** An attempt of a started batch: its attempt while the batch holds it (see `BatchLease.letGo`). */
interface StartedInBatch {
  readonly attemptNumber: number;
  readonly attempt: Attempt | undefined;
  readonly done: Promise<void>;
}

/**
 * A run's claimed attempts, from the local buffer to their recorded
 * outcome: a buffered attempt starts the moment one of the `concurrency`
 * handler slots frees up (never once the run is stopping), and every
 * outcome is counted here, the one place the run's counters change.
 *
 * @example
 * ```ts
 * const slots = new HandlerSlots({ executor, concurrency: 4, prefetch, nudge });
 * slots.claimed(jobs, sentAt, claim); // buffered, under lease
 * slots.startBuffered(); // as many as there are free slots
 * slots.stop();
 * await slots.giveBackBuffered();
 * ```
 */
export class HandlerSlots<T> {
  readonly #parts: HandlerSlotsParts<T>;
  readonly #counters: RunCounters = newRunCounters();
  /** Claimed and not started, oldest first (without batches). */
  readonly #buffer: Attempt[] = [];
  /** With batches: the batches claimed and not started, oldest first, each under one lease; only the last may be short. */
  readonly #batchBuffer: BatchLease[] = [];
  /** Attempts in {@link #batchBuffer}. */
  #bufferedInBatches = 0;
  /** With batches: the batches started and not yet recorded, and when each will be. */
  readonly #startedBatches = new Map<BatchLease, Promise<void>>();
  /** Attempts of {@link #startedBatches} not yet recorded. */
  #unrecordedInBatches = 0;
  /** Batches that wait for older attempts of their jobs, still running here, to be recorded (see #claimedInBatches). */
  readonly #batchWaitsFor = new Map<BatchLease, Promise<void>[]>();
  /**
   * The latest started attempt of each job not yet recorded, by job id. A
   * newer attempt of a job whose older attempt is still here waits for it,
   * so one process never runs a job twice at once.
   */
  readonly #started = new Map<string, Started>();
  /** Attempts in running handlers (what `concurrency` bounds, without batches). An attempt whose outcome is being written no longer counts. */
  #running = 0;
  /** Batches running now: what `concurrency` bounds, with batches. */
  #batchesRunning = 0;
  /** When the buffer last went from empty to holding attempts: a short batch waits from then. */
  #bufferedSince = 0;
  /** The timer that starts a short batch once its wait is over. */
  #fillTimer: AbortController | undefined;
  /** Attempts recorded so far; a claim that raced a recording must not conclude "drained". */
  #recorded = 0;
  #stopping = false;

  constructor(parts: HandlerSlotsParts<T>) {
    this.#parts = parts;
  }

  /** Attempts in running handlers. */
  get running(): number {
    return this.#running;
  }

  /** How many attempts the handler slots run at once when full: `concurrency`, times the batch size with batches. */
  get capacity(): number {
    return this.#parts.concurrency * this.batchSize;
  }

  /** Attempts per handler call: 1 without batches. */
  get batchSize(): number {
    return this.#parts.batches?.size ?? 1;
  }

  /** Attempts claimed and waiting in the buffer. */
  get buffered(): number {
    return this.#buffer.length + this.#bufferedInBatches;
  }

  /** Attempts started and not yet recorded. */
  get unrecorded(): number {
    return this.#started.size + this.#unrecordedInBatches;
  }

  /** Attempts recorded so far. */
  get recorded(): number {
    return this.#recorded;
  }

  /** Jobs claimed so far. */
  get claimedSoFar(): number {
    return this.#counters.claimed;
  }

  /** A copy of the counters as they are now. */
  counts(): RunCounters {
    return { ...this.#counters };
  }

  /**
   * Buffers the jobs of a claim sent at `sentAt` (its number in
   * `LeaseKeeper.claimed`: `claim`), each under lease; {@link startBuffered}
   * starts them.
   */
  claimed(jobs: readonly ClaimedJob[], sentAt: number, claim: number): void {
    const { executor, batches } = this.#parts;
    this.#counters.claimed += jobs.length;
    if (batches !== undefined) return this.#claimedInBatches(batches, jobs, sentAt, claim);
    for (const job of jobs) {
      const earlier = this.#started.get(job.id);
      // The same attempt again: a database crash undid the claim of the earlier run (see `WorkerOptions.durableClaims`)
      // and the job's row is this claim's now, so the earlier run stops at once and writes nothing.
      if (earlier?.attempt.job.attempt === job.attempt) executor.supersede(earlier.attempt);
      this.#buffer.push(executor.claimed(job, sentAt, claim));
    }
  }

  /**
   * Jobs a claim took after the run stopped waiting for it: counted as
   * claimed, and their attempts returned to be given back at once.
   */
  claimedLate(jobs: readonly ClaimedJob[], sentAt: number): Attempt[] {
    this.#counters.claimed += jobs.length;
    return jobs.map((job) => this.#parts.executor.claimed(job, sentAt));
  }

  /** Starts buffered attempts while handler slots are free. */
  startBuffered(): void {
    if (this.#parts.batches !== undefined) return this.#startBatches(this.#parts.batches);
    while (!this.#stopping && this.#running < this.#parts.concurrency && this.#buffer.length > 0) {
      this.#start(this.#buffer.shift()!);
    }
  }

  /** No buffered attempt starts from now on. */
  stop(): void {
    this.#stopping = true;
    this.#fillTimer?.abort(NO_MORE_BATCHES);
  }

  /** Gives every buffered attempt back to the queue without spending it: none of them started. */
  giveBackBuffered(): Promise<unknown> {
    const batches = this.#batchBuffer.splice(0);
    this.#bufferedInBatches = 0;
    const attempts = this.#buffer.splice(0);
    for (const lease of batches) attempts.push(...lease.attempts);
    return this.giveBack(attempts).then(() => {
      for (const lease of batches) this.#parts.batches?.leases.releaseBatch(lease);
    });
  }

  /** Gives `attempts` (never started) back to the queue without spending them. */
  giveBack(attempts: readonly Attempt[]): Promise<unknown> {
    return Promise.all(attempts.map((attempt) => this.#parts.executor.giveBack(attempt).then((result) => this.#count(result))));
  }

  /** Settles when every attempt started by now is recorded (older attempts are chained into newer ones). */
  allStarted(): Promise<unknown> {
    return Promise.all([...[...this.#started.values()].map((entry) => entry.done), ...this.#startedBatches.values()]);
  }

  /** Aborts every attempt started and not yet recorded with `ShutdownError`: they are given back. */
  abortStarted(): void {
    for (const { attempt } of this.#started.values()) attempt.signal.abort(new ShutdownError());
    for (const lease of this.#startedBatches.keys()) lease.abortHeld(new ShutdownError());
  }

  #start(attempt: Attempt): void {
    const { executor, nudge, prefetch } = this.#parts;
    const { job } = attempt;
    this.#running += 1;
    // The claim handed over a newer attempt of a job whose older attempt this
    // process still runs (its lease lapsed while the process was paused): the
    // older one is aborted already; the newer one starts once it has settled.
    const previous = this.#started.get(job.id)?.done;
    const freeSlot = (): void => {
      this.#running -= 1;
      prefetch.finished();
      this.startBuffered();
      nudge.wake();
    };
    const run = previous === undefined ? executor.run(attempt, freeSlot) : previous.then(() => executor.run(attempt, freeSlot));
    const done = run.then((result) => this.#settled(attempt, result));
    this.#started.set(job.id, { attempt, done });
  }

  /** Counts a started attempt's recorded result. */
  #settled(attempt: Attempt, result: AttemptResult): void {
    const { id } = attempt.job;
    if (this.#started.get(id)?.attempt === attempt) this.#started.delete(id);
    this.#countRecorded(result);
  }

  #countRecorded(result: AttemptResult): void {
    this.#count(result);
    this.#recorded += 1;
    this.#parts.nudge.wake();
    this.#parts.onRecorded?.();
  }

  /**
   * Buffers a claim's jobs in batches of the batch size, each under one
   * lease; jobs first top up the last buffered batch when it is short.
   */
  #claimedInBatches(batches: BatchSlots<T>, jobs: readonly ClaimedJob[], sentAt: number, claim: number): void {
    const { leases } = batches;
    if (this.#bufferedInBatches === 0) this.#bufferedSince = batches.clock.now();
    const deadline = leases.deadlineOf(sentAt);
    const running = this.#runningInBatches(jobs);
    let last = this.#batchBuffer.at(-1);
    for (const job of jobs) {
      if (last === undefined || last.size >= batches.size) {
        last = new BatchLease(claim, deadline);
        this.#batchBuffer.push(last);
        leases.holdBatch(last);
      }
      last.add(job, claim, deadline);
      const earlier = running?.get(job.id);
      if (earlier === undefined) continue;
      // As in `claimed` without batches: the same attempt again is superseded (unless its handler is over and its
      // outcome on its way: the fence decides then); a newer one waits for the older.
      const older = earlier.attempt;
      if (earlier.attemptNumber === job.attempt && older !== undefined) this.#parts.executor.supersede(older);
      const waits = this.#batchWaitsFor.get(last);
      if (waits === undefined) this.#batchWaitsFor.set(last, [earlier.done]);
      else waits.push(earlier.done);
    }
    this.#bufferedInBatches += jobs.length;
  }

  /**
   * The attempts of started batches not yet recorded, by job id, when a
   * claim may have handed over one of their jobs again; else undefined. That
   * takes a lease this worker lost (a newer attempt, or the same one after a
   * crash undid its claim), so until the keeper has lost one, no look is needed.
   */
  #runningInBatches(jobs: readonly ClaimedJob[]): Map<string, StartedInBatch> | undefined {
    if (this.#startedBatches.size === 0) return undefined;
    if (!this.#parts.batches!.leases.lostAny && !jobs.some((job) => job.attempt > 1)) return undefined;
    const running = new Map<string, StartedInBatch>();
    for (const [lease, done] of this.#startedBatches) {
      const { attempts } = lease;
      lease.forEachHeld((id, attemptNumber, index) => running.set(id, { attemptNumber, attempt: attempts[index], done }));
    }
    return running;
  }

  /** Starts batches while slots are free; a short one only once its wait is over (a timer comes back then). */
  #startBatches(batches: BatchSlots<T>): void {
    while (!this.#stopping && this.#batchesRunning < this.#parts.concurrency && this.#batchBuffer.length > 0) {
      const next = this.#batchBuffer[0]!;
      const waitLeft = this.#bufferedSince + batches.waitMs - batches.clock.now();
      if (next.size < batches.size && waitLeft > 0) {
        if (this.#fillTimer === undefined) this.#waitToFill(batches, waitLeft);
        return;
      }
      this.#batchBuffer.shift();
      this.#bufferedInBatches -= next.size;
      this.#startBatch(batches.executor, next);
      this.#bufferedSince = batches.clock.now();
    }
  }

  #waitToFill(batches: BatchSlots<T>, waitMs: number): void {
    const timer = new AbortController();
    this.#fillTimer = timer;
    void batches.clock.sleep(waitMs, timer.signal).then(() => {
      if (this.#fillTimer === timer) this.#fillTimer = undefined;
      if (!timer.signal.aborted) this.startBuffered();
    });
  }

  #startBatch(executor: BatchExecutor<T>, lease: BatchLease): void {
    const { nudge, prefetch } = this.#parts;
    const size = lease.size;
    this.#running += size;
    this.#unrecordedInBatches += size;
    this.#batchesRunning += 1;
    const freeSlot = (): void => {
      this.#running -= size;
      this.#batchesRunning -= 1;
      prefetch.finished(size);
      this.startBuffered();
      nudge.wake();
    };
    // Older attempts of these jobs that this process still runs (see #claimedInBatches) are recorded first.
    const previous = this.#batchWaitsFor.get(lease);
    this.#batchWaitsFor.delete(lease);
    // Each attempt is counted the moment its outcome is recorded (the executor says so; its answers always come
    // later than this call), and the batch's attempts share one promise for "recorded".
    const run =
      previous === undefined
        ? executor.run(lease, freeSlot, this.#settledInBatch)
        : Promise.all(previous).then(() => executor.run(lease, freeSlot, this.#settledInBatch));
    this.#startedBatches.set(
      lease,
      run.then(() => void this.#startedBatches.delete(lease)),
    );
  }

  readonly #settledInBatch = (result: AttemptResult): void => {
    this.#unrecordedInBatches -= 1;
    this.#countRecorded(result);
  };

  /** The one place the run's counters change, besides the claims. */
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
}
