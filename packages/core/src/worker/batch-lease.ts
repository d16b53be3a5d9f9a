import type { ClaimedJob } from "../job/job-record";
import type { Attempt } from "./attempt-executor";
import { AttemptSignal } from "./attempt-signal";

/**
 * The attempts of one batch under one lease: one deadline, one entry in
 * the {@link LeaseKeeper}, one renewal in each heartbeat, released once
 * when the batch is over: what the batch's jobs share is kept once per
 * batch, not once per job.
 *
 * Each attempt keeps its own signal while its handler may run: a cancel or
 * a renewal that no longer lists one job stops that job alone
 * ({@link abort}). Once the batch's handler has answered and every job is
 * settled, the batch lets go of its attempts ({@link letGo}) and keeps only
 * each job's id and attempt number until its outcome is written, so the
 * claimed jobs (payloads and all) are not kept alive by the writes. An
 * attempt whose outcome is recorded leaves the lease at once
 * ({@link recorded}): heartbeats no longer extend it, so the store's answer
 * for a finished job cannot be taken for a lost lease.
 *
 * Jobs of a later claim may join a batch short of its size before it
 * starts ({@link add}); the lease then counts from the earliest claim's
 * time and is on disk only once the latest claim is.
 *
 * @example
 * ```ts
 * const lease = new BatchLease(claim, deadline);
 * lease.add(job, claim, deadline);
 * leases.holdBatch(lease);
 * // … once every attempt is recorded:
 * leases.releaseBatch(lease);
 * ```
 */
export class BatchLease {
  /** The jobs' ids and attempt numbers, by index. */
  readonly #ids: string[] = [];
  readonly #attemptNumbers: number[] = [];
  #attempts: Attempt[] | undefined = [];
  /** The claim's number (see `ClaimDurability`): the latest claim whose jobs are in the batch. */
  claim: number;
  /** Local time from which the database lease of some attempt may have run out (see `LeaseKeeper`). */
  deadline: number;
  /** Attempts whose outcome is recorded, by index; made on the first one. */
  #recorded: Uint8Array | undefined;
  #left = 0;

  constructor(claim: number, deadline: number) {
    this.claim = claim;
    this.deadline = deadline;
  }

  /** How many attempts the batch holds. */
  get size(): number {
    return this.#ids.length;
  }

  /** How many attempts still hold the lease (their outcome is not recorded yet). */
  get held(): number {
    return this.#left;
  }

  /** The batch's attempts, in order; none once it has let go of them ({@link letGo}). */
  get attempts(): readonly Attempt[] {
    return this.#attempts ?? [];
  }

  /** Adds an attempt of a job claimed with the claim numbered `claim`, whose lease runs out locally at `deadline`. */
  add(job: ClaimedJob, claim: number, deadline: number): Attempt {
    const attempt: Attempt = { job, signal: new AttemptSignal() };
    this.#attempts?.push(attempt);
    this.#ids.push(job.id);
    this.#attemptNumbers.push(job.attempt);
    this.#left += 1;
    if (claim > this.claim) this.claim = claim;
    if (deadline < this.deadline) this.deadline = deadline;
    return attempt;
  }

  /** Whether the attempt at `index` still holds the lease. */
  holds(index: number): boolean {
    return this.#recorded?.[index] !== 1;
  }

  /** The index of this attempt of this job, when it still holds the lease; else -1. */
  indexOf(id: string, attempt: number): number {
    for (let index = 0; index < this.#ids.length; index += 1) {
      if (this.#ids[index] === id && this.#attemptNumbers[index] === attempt && this.holds(index)) return index;
    }
    return -1;
  }

  /** The attempt at `index` is recorded: it no longer holds the lease. */
  recorded(index: number): void {
    this.#recorded ??= new Uint8Array(this.#ids.length);
    if (this.#recorded[index] === 1) return;
    this.#recorded[index] = 1;
    this.#left -= 1;
  }

  /** Stops the attempt at `index` with `reason`; nothing happens once the batch has let go of its attempts. */
  abort(index: number, reason: Error): void {
    this.#attempts?.[index]?.signal.abort(reason);
  }

  /** Stops every attempt that still holds the lease with `reason` (see {@link abort}). */
  abortHeld(reason: Error): void {
    this.forEachHeld((_id, _attempt, index) => this.abort(index, reason));
  }

  /**
   * Every job settled and handed to the recorder: the batch keeps its jobs'
   * ids and attempt numbers only. From now on {@link abort} changes nothing
   * (no handler runs; each outcome's write is fenced).
   */
  letGo(): void {
    this.#attempts = undefined;
  }

  /** Calls `each` with the id, attempt number and index of every attempt that still holds the lease. */
  forEachHeld(each: (id: string, attempt: number, index: number) => void): void {
    for (let index = 0; index < this.#ids.length; index += 1) if (this.holds(index)) each(this.#ids[index]!, this.#attemptNumbers[index]!, index);
  }
}
