/** How the next claim may go out (see {@link ClaimDurability.nextClaim}). */
export type ClaimMode =
  /** Without waiting for its flush: the worker's writes are confirmed, so a claim lost to a crash is noticed. */
  | "fast"
  /** Waiting for its flush: asked for, or the worker's last write failed and no write has been confirmed since. */
  | "durable"
  /** Not at all: a write has gone unanswered too long, so a claim could commit jobs no one can finish. */
  | "hold";

/**
 * The bookkeeping behind a worker's claim durability, kept by its
 * `LeaseKeeper` alone: which claims may not be on disk yet, and whether
 * the database still confirms the worker's writes.
 *
 * Unless durable claims are asked for (`WorkerOptions.durableClaims`), a
 * claim commits without waiting for its WAL flush, so a database crash
 * right after it can undo it. PostgreSQL writes WAL in order: once a write
 * this worker sent after a claim answered has committed synchronously (as
 * every outcome and heartbeat does) and changed a row, the claim is on
 * disk too. Claims are numbered as they answer; a write takes the number
 * of the last one before it is sent and, once it has changed a row, marks
 * every claim up to that number flushed.
 *
 * The same writes tell whether claims may go out at all. A server that
 * commits a claim at once but holds every synchronous commit (a
 * synchronous standby that does not answer) would otherwise let the
 * worker claim jobs whose outcomes never commit. So while a write has
 * been unanswered longer than the heartbeat timeout, no claim goes out;
 * once it has been unanswered for a whole lease, or after a write failed,
 * claims wait for their flush until a write is confirmed again (such a
 * claim waits as the writes do, so it commits nothing no one can finish,
 * and a write stuck on something else, a lock, does not stop the worker).
 *
 * @example
 * ```ts
 * const durability = new ClaimDurability({ alwaysDurable: false, holdAfterMs: 5_000, holdAtMostMs: 30_000 });
 * const claim = durability.claimed(durability.nextClaim(clock.now()) === "durable", jobs.length);
 * await durability.confirm(() => store.completeJobs(params), clock);
 * durability.isFlushed(claim); // true once a later write changed a row
 * ```
 */
export class ClaimDurability {
  readonly #alwaysDurable: boolean;
  readonly #holdAfterMs: number;
  readonly #holdAtMostMs: number;
  #claims = 0;
  #flushedUpTo = 0;
  /** When each write still in flight was sent. */
  readonly #inFlight = new Set<{ readonly sentAt: number }>();
  /** A write failed (or the connection did) and none has been confirmed since. */
  #failing = false;

  /**
   * `alwaysDurable`: every claim waits for its flush; claims hold while a
   * write has gone unanswered for `holdAfterMs` and less than `holdAtMostMs`.
   */
  constructor(settings: { readonly alwaysDurable: boolean; readonly holdAfterMs: number; readonly holdAtMostMs: number }) {
    this.#alwaysDurable = settings.alwaysDurable;
    this.#holdAfterMs = settings.holdAfterMs;
    this.#holdAtMostMs = settings.holdAtMostMs;
  }

  /** How the claim about to be sent at `now` may go out. */
  nextClaim(now: number): ClaimMode {
    let stuck = false;
    for (const write of this.#inFlight) {
      const unansweredMs = now - write.sentAt;
      if (unansweredMs >= this.#holdAtMostMs) stuck = true;
      else if (unansweredMs >= this.#holdAfterMs) return "hold";
    }
    return this.#alwaysDurable || this.#failing || stuck ? "durable" : "fast";
  }

  /** How long from `now` until a hold {@link nextClaim} answers now ends by itself (a write reaches a whole lease unanswered). */
  holdEndsIn(now: number): number {
    let endsIn = Infinity;
    for (const write of this.#inFlight) {
      const left = write.sentAt + this.#holdAtMostMs - now;
      if (left > 0 && left < endsIn) endsIn = left;
    }
    return endsIn;
  }

  /**
   * Numbers a claim that just answered with `took` jobs: `0` (always on
   * disk) for one that waited for its flush or took nothing. A durable
   * claim that took jobs committed synchronously, so it also confirms the
   * writes and the claims before it.
   */
  claimed(durable: boolean, took: number): number {
    if (took === 0) return 0;
    if (durable) {
      this.#flushedUpTo = this.#claims;
      this.#failing = false;
      return 0;
    }
    this.#claims += 1;
    return this.#claims;
  }

  /** Whether claim number `claim` is known to be on disk. */
  isFlushed(claim: number): boolean {
    return claim <= this.#flushedUpTo;
  }

  /**
   * Runs a synchronous write sent at `sentAt` and learns from its answer:
   * one that changed a row (`changed` of the answer) proves the claims
   * before it flushed; any answer means writes are confirmed again; a
   * failure for the connection's sake (`isOutage`) means they may not be.
   */
  async confirm<R>(write: () => Promise<R>, sentAt: number, changed: (answer: R) => number, isOutage: (error: unknown) => boolean): Promise<R> {
    const mark = this.#claims;
    const entry = { sentAt };
    this.#inFlight.add(entry);
    try {
      const answer = await write();
      if (changed(answer) > 0 && mark > this.#flushedUpTo) this.#flushedUpTo = mark;
      this.#failing = false;
      return answer;
    } catch (error) {
      if (isOutage(error)) this.#failing = true;
      throw error;
    } finally {
      this.#inFlight.delete(entry);
    }
  }

  /** The connection to the database failed: claims wait for their flush until a write is confirmed again. */
  connectionLost(): void {
    this.#failing = true;
  }
}
