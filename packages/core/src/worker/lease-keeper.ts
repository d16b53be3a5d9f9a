import { coerceError } from "../errors/coerce-error";
import { ErrorCode } from "../errors/error-codes";
import { CancelledError, LeaseLostError } from "../errors/job-errors";
import { hasErrorCode } from "../errors/stint-error";
import type { Logger } from "../logging/logger";
import type { JobAttempt, JobStore } from "../store/job-store";
import type { ExtendedLeases } from "../store/store-params";
import type { BatchLease } from "./batch-lease";
import { ClaimDurability, type ClaimMode } from "./claim-durability";
import { LeaseTable } from "./lease-table";
import { settleWithin } from "./settle-within";
import { WakeUp } from "./wake-up";
import type { ResolvedWorkerOptions } from "./worker-options";

/** Reasons the keeper cancels its own waits with (reasons of its own: no exception is built). */
const REWATCH = "an earlier deadline to watch";
const STOPPED = "lease keeper stopped";
const HOLD_OVER = "claims may go out again";

/** What the keeper stops when a lease lapses: an attempt's signal. */
export interface Abortable {
  abort(reason: Error): void;
}

interface HeldLease extends JobAttempt {
  readonly controller: Abortable;
  /** The claim's number (see {@link ClaimDurability}): until it is flushed, a failed connection may mean a crash undid it. */
  readonly claim: number;
  /**
   * Local time from which the database lease may have run out: the local
   * time just before the claim or the last confirmed renewal was sent, plus
   * `leaseMs`, minus the safety margin.
   */
  deadline: number;
}

/**
 * Keeps the leases of a worker's attempts and enforces them locally.
 *
 * - Every held attempt has a local deadline (see `HeldLease.deadline`). One
 *   timer, set for the earliest deadline, aborts each attempt whose deadline
 *   passes with `LeaseLostError`, whether or not a heartbeat is in flight:
 *   the lease decides whether a handler may still run.
 * - Every `heartbeatIntervalMs` one fenced statement extends all held
 *   leases; a confirmed renewal moves their deadlines. A heartbeat that does
 *   not answer within `heartbeatTimeoutMs` is given up (the next one is sent
 *   sooner), so a hung connection cannot stall renewals or shutdown.
 * - A lease the store no longer lets this worker extend is aborted at once:
 *   with `CancelledError` when the store says an operator cancelled the job
 *   (as {@link cancel} does the moment the store's wake-ups say so), else
 *   with `LeaseLostError`.
 * - A batch's attempts share one lease ({@link holdBatch}): one entry,
 *   one deadline, renewed by the same heartbeat; a renewal that no longer
 *   lists one of its jobs stops that job alone.
 * - It owns the worker's claim durability (see {@link ClaimDurability}):
 *   every synchronous write the worker sends goes through {@link confirm},
 *   which tells which claims are on disk and whether writes are still
 *   confirmed; the claim loop asks {@link nextClaim} how its next claim may
 *   go out. A lease whose claim may not be on disk yet is aborted as soon
 *   as the worker sees its connection to the database fail
 *   ({@link connectionLost}): a crash may have undone the claim, and the
 *   job may be claimed again the moment the server is back.
 */
export class LeaseKeeper {
  readonly #store: JobStore;
  readonly #options: ResolvedWorkerOptions;
  readonly #workerId: string;
  readonly #log: Logger;
  readonly #durability: ClaimDurability;
  /** Woken whenever a write sent through {@link confirm} answers or fails. */
  readonly #writeSettled = new WakeUp();
  /** Whether the last {@link nextClaim} said "hold" (its start and end are logged once). */
  #holding = false;
  readonly #held = new LeaseTable<HeldLease>();
  /** The leases of batches (see {@link holdBatch}), few: one per batch. */
  readonly #batches = new Set<BatchLease>();
  /** Whether an attempt was stopped for a lost lease, a cancel or a failed connection since the keeper was made. */
  #lostAny = false;
  /**
   * No held lease's deadline is earlier than this (deadlines only move
   * later, and a new lease lowers it): until it passes, {@link expireLapsed}
   * has nothing to look at. A full look sets it to the earliest deadline left.
   */
  #noDeadlineBefore = Infinity;
  readonly #stop = new AbortController();
  /** Opened when an attempt is held while the deadline watcher has nothing to watch. */
  readonly #firstHeld = new WakeUp();
  /** Cuts the watcher's current sleep short when a deadline earlier than its target appears. */
  #rewatch: AbortController | undefined;
  #watchTarget = Infinity;
  #loops: Promise<unknown> | undefined;

  constructor(store: JobStore, options: ResolvedWorkerOptions, workerId: string, log: Logger) {
    this.#store = store;
    this.#options = options;
    this.#workerId = workerId;
    this.#log = log;
    this.#durability = new ClaimDurability({ alwaysDurable: options.durableClaims, holdAfterMs: options.heartbeatTimeoutMs, holdAtMostMs: options.leaseMs });
  }

  /** Starts the heartbeat and the deadline watcher. */
  start(): void {
    this.#loops ??= Promise.all([this.#heartbeats(), this.#watchDeadlines()]);
  }

  /** Stops both loops; a heartbeat in flight is not waited for beyond its timeout. */
  async stop(): Promise<void> {
    this.#stop.abort(STOPPED);
    this.#rewatch?.abort(REWATCH);
    await this.#loops;
  }

  /**
   * Starts keeping an attempt's lease; `sentAt` is the local time taken just
   * before its claim was sent, `claim` the claim's number from {@link claimed}.
   */
  hold(job: JobAttempt, controller: Abortable, sentAt: number, claim: number): void {
    const deadline = this.deadlineOf(sentAt);
    this.#held.add({ id: job.id, attempt: job.attempt, controller, claim, deadline });
    this.#watch(deadline);
  }

  /** The local deadline of a lease taken by a claim sent at `sentAt` (see `HeldLease.deadline`). */
  deadlineOf(sentAt: number): number {
    return sentAt + this.#options.leaseMs - this.#options.leaseMarginMs;
  }

  /**
   * Starts keeping the one lease of a batch's attempts (its deadline and
   * claim are the lease's own); {@link releaseBatch} stops. Each attempt
   * leaves it when its outcome is recorded (`BatchLease.recorded`).
   */
  holdBatch(lease: BatchLease): void {
    this.#batches.add(lease);
    this.#watch(lease.deadline);
  }

  /** Stops keeping a batch's lease (the batch is over, or was given back). */
  releaseBatch(lease: BatchLease): void {
    this.#batches.delete(lease);
  }

  /** Whether a batch's lease is held and its local deadline has not passed. */
  holdsBatch(lease: BatchLease): boolean {
    return this.#batches.has(lease) && lease.deadline > this.#options.clock.now();
  }

  /**
   * Whether an attempt was stopped for a lost lease, a cancel or a failed
   * connection since the keeper started: until then, no claim can hand this
   * worker a job it still runs.
   */
  get lostAny(): boolean {
    return this.#lostAny;
  }

  #watch(deadline: number): void {
    if (deadline < this.#noDeadlineBefore) this.#noDeadlineBefore = deadline;
    if (deadline < this.#watchTarget) {
      this.#firstHeld.wake();
      this.#rewatch?.abort(REWATCH);
    }
  }

  /**
   * Stops keeping an attempt's lease (the attempt is over). Only the lease
   * held for `controller`: when a crash undid a claim and this worker claimed
   * the same attempt again, the older run's end must not drop the newer one's lease.
   */
  release(job: JobAttempt, controller: Abortable): void {
    const lease = this.#held.find(job);
    if (lease?.controller === controller) this.#held.delete(lease);
  }

  /**
   * How the claim about to be sent may go out: `"fast"` (without waiting
   * for its flush), `"durable"`, or `"hold"` — a write has gone unanswered
   * for longer than the heartbeat timeout (and less than a lease), so the
   * claim must wait ({@link untilHoldMayEnd}).
   */
  nextClaim(): ClaimMode {
    const mode = this.#durability.nextClaim(this.#options.clock.now());
    if ((mode === "hold") !== this.#holding) {
      this.#holding = mode === "hold";
      const fields = { workerId: this.#workerId };
      if (this.#holding) {
        this.#log.warn(
          `Claims hold: a write has gone unanswered for over ${this.#options.heartbeatTimeoutMs} ms, so jobs claimed now might never be finished`,
          fields,
        );
      } else if (mode === "durable") {
        this.#log.warn("Claims resume, each waiting for its flush: a write is still unanswered, or the last one failed", fields);
      } else this.#log.info("Claims resume: the database confirms writes again", fields);
    }
    return mode;
  }

  /**
   * Waits out a hold: resolves when a write sent through {@link confirm}
   * answers or fails, when the hold ends by itself (a write unanswered for
   * a whole lease: claims then wait for their flush), or when `signal` aborts.
   */
  async untilHoldMayEnd(signal: AbortSignal): Promise<void> {
    const { clock } = this.#options;
    const timer = new AbortController();
    const endsIn = this.#durability.holdEndsIn(clock.now());
    const waits = [this.#writeSettled.wait(AbortSignal.any([signal, timer.signal]))];
    if (endsIn !== Infinity) waits.push(clock.sleep(endsIn, AbortSignal.any([signal, timer.signal])));
    await Promise.race(waits);
    timer.abort(HOLD_OVER);
  }

  /** Numbers a claim that answered with `took` jobs, sent as `mode` said (the number {@link hold} takes). */
  claimed(mode: ClaimMode, took: number): number {
    return this.#durability.claimed(mode === "durable", took);
  }

  /**
   * Runs a synchronous write of the worker (an outcome, a heartbeat) and
   * learns from its answer which claims are on disk and whether writes are
   * confirmed. `changedRows` finds the rows it changed in the answer; by
   * default the answer is that list.
   */
  confirm<R extends readonly unknown[]>(write: () => Promise<R>): Promise<R>;
  confirm<R>(write: () => Promise<R>, changedRows: (answer: R) => readonly unknown[]): Promise<R>;
  confirm<R>(write: () => Promise<R>, changedRows?: (answer: R) => readonly unknown[]): Promise<R> {
    const changed = (answer: R): number => (changedRows === undefined ? (answer as readonly unknown[]) : changedRows(answer)).length;
    const settled = this.#durability.confirm(write, this.#options.clock.now(), changed, isOutage);
    settled.then(this.#wakeWriteWaiters, this.#wakeWriteWaiters);
    return settled;
  }

  /**
   * The worker saw its connection to the database fail (`why`): aborts
   * every attempt whose claim is not known to be on disk, since a crash
   * may have undone it, and claims wait for their flush until a write is
   * confirmed again.
   */
  connectionLost(why: string): void {
    this.#durability.connectionLost();
    this.#lostAny = true;
    const because = `its claim may not have reached disk before the database connection failed (${why})`;
    for (const lease of this.#held.values()) {
      if (!this.#durability.isFlushed(lease.claim)) this.#lose(lease, because);
    }
    for (const lease of [...this.#batches]) if (!this.#durability.isFlushed(lease.claim)) this.#loseBatch(lease, because);
  }

  /**
   * An operator cancelled `job` while this worker held it (the store's
   * wake-ups said so): aborts the attempt with `CancelledError` and stops
   * keeping its lease. Nothing to do for an attempt not held (any more).
   */
  cancel(job: JobAttempt): void {
    const lease = this.#held.find(job);
    if (lease !== undefined) return this.#cancel(lease);
    // Cancels are rare and batches few: a walk costs less than a lease per job.
    for (const batch of this.#batches) {
      const at = batch.indexOf(job.id, job.attempt);
      if (at >= 0) return this.#stopInBatch(batch, at, cancelledError(job));
    }
  }

  /** Whether the lease of `job` is held and its local deadline has not passed. */
  holds(job: JobAttempt): boolean {
    const lease = this.#held.find(job);
    return lease !== undefined && lease.deadline > this.#options.clock.now();
  }

  /**
   * Aborts every attempt whose local deadline has passed. The run calls it
   * before each claim and when a claim returns, so that a process resumed
   * after a pause stops its lapsed handlers before it takes more work.
   */
  expireLapsed(now: number = this.#options.clock.now()): void {
    // A busy batch worker holds thousands of leases and looks before every claim: most looks need not walk them.
    if (now < this.#noDeadlineBefore) return;
    let earliest = Infinity;
    const why = (deadline: number): string =>
      `its lease ran out locally ${Math.round(now - deadline + this.#options.leaseMarginMs)} ms ago (no renewal confirmed in time)`;
    for (const lease of this.#held.values()) {
      if (lease.deadline <= now) this.#lose(lease, why(lease.deadline));
      else if (lease.deadline < earliest) earliest = lease.deadline;
    }
    for (const lease of [...this.#batches]) {
      if (lease.deadline <= now) this.#loseBatch(lease, why(lease.deadline));
      else if (lease.deadline < earliest) earliest = lease.deadline;
    }
    this.#noDeadlineBefore = earliest;
  }

  async #watchDeadlines(): Promise<void> {
    const { clock } = this.#options;
    const stop = this.#stop.signal;
    while (!stop.aborted) {
      this.expireLapsed();
      this.#watchTarget = this.#earliestDeadline();
      if (this.#watchTarget === Infinity) {
        await this.#firstHeld.wait(stop);
        continue;
      }
      this.#rewatch = new AbortController();
      await clock.sleep(Math.max(0, this.#watchTarget - clock.now()), AbortSignal.any([stop, this.#rewatch.signal]));
    }
  }

  #earliestDeadline(): number {
    let earliest = Infinity;
    for (const lease of this.#held.values()) if (lease.deadline < earliest) earliest = lease.deadline;
    for (const lease of this.#batches) if (lease.deadline < earliest) earliest = lease.deadline;
    return earliest;
  }

  async #heartbeats(): Promise<void> {
    const { clock, heartbeatIntervalMs, heartbeatTimeoutMs } = this.#options;
    const stop = this.#stop.signal;
    let waitMs = heartbeatIntervalMs;
    while (!stop.aborted) {
      await clock.sleep(waitMs, stop);
      if (stop.aborted) return;
      const renewed = (this.#held.size === 0 && this.#batches.size === 0) || (await this.#beat());
      // After a failed heartbeat, try again soon: the deadline watcher stops handlers if none gets through in time.
      waitMs = renewed ? heartbeatIntervalMs : Math.min(heartbeatIntervalMs, heartbeatTimeoutMs);
    }
  }

  /**
   * Sends a heartbeat now, when any lease is held: its answer names the
   * attempts cancelled since their claim. The run calls it once its
   * wake-up connection listens, for the cancels announced while that
   * connection was still being made (the run's first claims do not wait
   * for it): unheard, they would stop their handlers only at the next
   * regular heartbeat.
   *
   * @example
   * ```ts
   * await wakeups.subscribe([queue], listener);
   * void leases.beatNow();
   * ```
   */
  async beatNow(): Promise<void> {
    if (this.#stop.signal.aborted || (this.#held.size === 0 && this.#batches.size === 0)) return;
    await this.#beat();
  }

  /**
   * Sends one heartbeat for every held lease; false when it failed or did
   * not answer in time. A heartbeat given up on is not forgotten: when its
   * answer comes later it still counts, since the lease it confirms runs
   * from a time after `sentAt` (a database slow to commit, as under a burst
   * of writes, answers late rather than never).
   */
  async #beat(): Promise<boolean> {
    const { clock, leaseMs, heartbeatTimeoutMs } = this.#options;
    const batch = this.#held.values();
    const batches = [...this.#batches];
    const sentAt = clock.now();
    const jobs = batch.map(({ id, attempt }) => ({ id, attempt }));
    for (const lease of batches) lease.forEachHeld((id, attempt) => jobs.push({ id, attempt }));
    const renewal = this.confirm(
      () => this.#store.extendLeases({ workerId: this.#workerId, leaseMs, jobs }),
      (answer) => answer.extended,
    ).then((answer) => this.#renew(batch, batches, answer, sentAt));
    const answer = await settleWithin(renewal, heartbeatTimeoutMs, clock, this.#stop.signal);
    if (answer.status === "fulfilled") return true;
    const why = answer.status === "rejected" ? coerceError(answer.reason).message : `no answer within ${heartbeatTimeoutMs} ms`;
    if (this.#stop.signal.aborted) return false;
    this.#log.warn(`Heartbeat failed for ${jobs.length} jobs: ${why}`, { workerId: this.#workerId });
    this.connectionLost(`a heartbeat failed: ${why}`);
    return false;
  }

  /** Applies a heartbeat's answer to the leases it was sent for that are still held as they were then. */
  #renew(batch: readonly HeldLease[], batches: readonly BatchLease[], answer: ExtendedLeases, sentAt: number): void {
    if (this.#stop.signal.aborted) return;
    const extended = new Set(answer.extended);
    const cancelled = new Set(answer.cancelled);
    const deadline = this.deadlineOf(sentAt);
    for (const lease of batch) {
      if (this.#held.find(lease) !== lease) continue;
      if (extended.has(lease.id)) lease.deadline = Math.max(lease.deadline, deadline);
      else if (cancelled.has(lease.id)) this.#cancel(lease);
      else this.#lose(lease, NOT_OWNER);
    }
    for (const lease of batches) {
      if (!this.#batches.has(lease)) continue;
      lease.deadline = Math.max(lease.deadline, deadline);
      // An attempt recorded since the heartbeat was sent is no longer listed, rightly: only those still held count.
      lease.forEachHeld((id, attempt, index) => {
        if (extended.has(id)) return;
        this.#stopInBatch(lease, index, cancelled.has(id) ? cancelledError({ id, attempt }) : leaseLostError({ id, attempt }, NOT_OWNER));
      });
    }
  }

  readonly #wakeWriteWaiters = (): void => this.#writeSettled.wake();

  #lose(lease: HeldLease, why: string): void {
    this.#held.delete(lease);
    this.#lostAny = true;
    lease.controller.abort(leaseLostError(lease, why));
  }

  #cancel(lease: HeldLease): void {
    this.#held.delete(lease);
    this.#lostAny = true;
    lease.controller.abort(cancelledError(lease));
  }

  /** Stops every attempt of a batch still holding its lease, and stops keeping it. */
  #loseBatch(lease: BatchLease, why: string): void {
    this.#batches.delete(lease);
    this.#lostAny = true;
    lease.abortHeld(new LeaseLostError(`lost the lease on the ${lease.held} jobs of a batch: ${why}`));
  }

  /** One attempt of a batch was cancelled or lost its lease (the rest of the batch keeps it, and hears of it from the batch). */
  #stopInBatch(lease: BatchLease, index: number, reason: Error): void {
    this.#lostAny = true;
    lease.abort(index, reason);
  }
}

const NOT_OWNER = "the store no longer lists this worker as the job's owner";

function leaseLostError(job: JobAttempt, why: string): LeaseLostError {
  return new LeaseLostError(`lost the lease on job ${job.id} (attempt ${job.attempt}): ${why}`);
}

function cancelledError(job: JobAttempt): CancelledError {
  return new CancelledError(`job ${job.id} (attempt ${job.attempt}) was cancelled while it ran; its handler must stop`);
}

/** Whether a write failed for the connection's sake rather than being refused by the store. */
function isOutage(error: unknown): boolean {
  return hasErrorCode(coerceError(error), ErrorCode.Infrastructure);
}
